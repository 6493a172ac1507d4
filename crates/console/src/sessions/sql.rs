//! The session table's statements, written once for both databases.

use common::db::{Binds, Dialect, Reads, StoreError};

use super::SessionRow;

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    SessionRow: Reads<D>,
{
    pub(crate) async fn insert(c: &mut D::Connection, row: &SessionRow) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO console_sessions (id_hash, company, username, access_token, csrf, expires_ms) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(row.id_hash.as_str())
        .bind(row.company.as_str())
        .bind(row.username.as_str())
        .bind(row.access_token.as_str())
        .bind(row.csrf.as_str())
        .bind(row.expires_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn find(
        c: &mut D::Connection,
        id_hash: &str,
        now_ms: i64,
    ) -> Result<Option<SessionRow>, StoreError> {
        Ok(sqlx::query_as::<D, SessionRow>(
            "SELECT id_hash, company, username, access_token, csrf, expires_ms FROM console_sessions \
             WHERE id_hash = $1 AND expires_ms > $2",
        )
        .bind(id_hash)
        .bind(now_ms)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn delete(c: &mut D::Connection, id_hash: &str) -> Result<(), StoreError> {
        sqlx::query::<D>("DELETE FROM console_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(&mut *c)
            .await?;
        Ok(())
    }

    pub(crate) async fn purge(c: &mut D::Connection, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query::<D>("DELETE FROM console_sessions WHERE expires_ms <= $1")
            .bind(now_ms)
            .execute(&mut *c)
            .await?;
        Ok(())
    }
}
