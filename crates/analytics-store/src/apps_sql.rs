//! The statements of applications, written once for both databases like `sql.rs`.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rows::AppRow;
use crate::sql::Statements;

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    (String,): Reads<D>,
    AppRow: Reads<D>,
{
    pub(crate) async fn get_app(
        c: &mut D::Connection,
        company: &str,
        name: &str,
    ) -> Result<Option<AppRow>, StoreError> {
        Ok(sqlx::query_as::<D, AppRow>(
            "SELECT company, name, definition, revision, updated FROM analytics_apps \
             WHERE company = $1 AND name = $2",
        )
        .bind(company)
        .bind(name)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn app_names(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar::<D, String>(
            "SELECT name FROM analytics_apps WHERE company = $1 ORDER BY name",
        )
        .bind(company)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn put_app(c: &mut D::Connection, row: &AppRow) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO analytics_apps (company, name, definition, revision, updated) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (company, name) DO UPDATE SET definition = excluded.definition, \
             revision = excluded.revision, updated = excluded.updated",
        )
        .bind(&row.company)
        .bind(&row.name)
        .bind(&row.definition)
        .bind(&row.revision)
        .bind(&row.updated)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn delete_app(
        c: &mut D::Connection,
        company: &str,
        name: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>("DELETE FROM analytics_apps WHERE company = $1 AND name = $2")
            .bind(company)
            .bind(name)
            .execute(&mut *c)
            .await?;
        Ok(D::rows_affected(&done) > 0)
    }
}
