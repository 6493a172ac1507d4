//! The revocation list's statements, written once for both databases.

use common::db::{Binds, Dialect, Probe, ProbeArgument, Reads, StoreError};

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<i64>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    (bool,): Reads<D>,
    (i64,): Reads<D>,
{
    pub(crate) async fn revoke(
        c: &mut D::Connection,
        jti: &str,
        company: &str,
        expires_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO access_token_revocations (jti, company, expires_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (jti) DO NOTHING",
        )
        .bind(jti)
        .bind(company)
        .bind(expires_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn is_revoked(c: &mut D::Connection, jti: &str) -> Result<bool, StoreError> {
        let found = sqlx::query_scalar::<D, i64>(
            "SELECT CAST(1 AS BIGINT) FROM access_token_revocations WHERE jti = $1",
        )
        .bind(jti)
        .fetch_optional(&mut *c)
        .await?;
        Ok(found.is_some())
    }

    pub(crate) async fn revoke_issued_before(
        c: &mut D::Connection,
        company: &str,
        kind: &str,
        id: &str,
        before_ms: i64,
        kept_until_ms: Option<i64>,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO tokens_revoked_before (company, holder_kind, holder_id, before_ms, kept_until_ms) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (company, holder_kind, holder_id) DO UPDATE SET \
             before_ms = CASE WHEN excluded.before_ms > tokens_revoked_before.before_ms \
                 THEN excluded.before_ms ELSE tokens_revoked_before.before_ms END, \
             kept_until_ms = excluded.kept_until_ms",
        )
        .bind(company)
        .bind(kind)
        .bind(id)
        .bind(before_ms)
        .bind(kept_until_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn revoked_before(
        c: &mut D::Connection,
        company: &str,
        kind: &str,
        id: &str,
    ) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar::<D, i64>(
            "SELECT before_ms FROM tokens_revoked_before \
             WHERE company = $1 AND holder_kind = $2 AND holder_id = $3",
        )
        .bind(company)
        .bind(kind)
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
    }

    /// The probe of `token_revoked` as a statement of its own.
    pub(crate) async fn is_token_revoked(
        c: &mut D::Connection,
        probe: &Probe<'_>,
    ) -> Result<bool, StoreError> {
        let sql = format!("SELECT {} AS revoked", probe.sql(1));
        let mut query = sqlx::query_scalar::<D, bool>(&sql);
        for argument in &probe.arguments {
            query = match *argument {
                ProbeArgument::Text(text) => query.bind(text),
                ProbeArgument::Integer(number) => query.bind(number),
            };
        }
        Ok(query.fetch_one(&mut *c).await?)
    }

    pub(crate) async fn purge_expired(
        c: &mut D::Connection,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let tokens = sqlx::query::<D>("DELETE FROM access_token_revocations WHERE expires_ms < $1")
            .bind(now_ms)
            .execute(&mut *c)
            .await?;
        let holders =
            sqlx::query::<D>("DELETE FROM tokens_revoked_before WHERE kept_until_ms < $1")
                .bind(now_ms)
                .execute(&mut *c)
                .await?;
        Ok(D::rows_affected(&tokens) + D::rows_affected(&holders))
    }
}
