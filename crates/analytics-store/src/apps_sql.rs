//! The statements of applications, compiled for each database like `sql.rs`.

use common::db::StoreError;

use super::super::rows::AppRow;
use super::dialect::Db;

type Conn = <Db as sqlx::Database>::Connection;

pub(crate) async fn get_app(
    c: &mut Conn,
    company: &str,
    name: &str,
) -> Result<Option<AppRow>, StoreError> {
    Ok(sqlx::query_as::<Db, AppRow>(
        "SELECT company, name, definition, revision, updated FROM analytics_apps \
         WHERE company = $1 AND name = $2",
    )
    .bind(company)
    .bind(name)
    .fetch_optional(&mut *c)
    .await?)
}

pub(crate) async fn app_names(c: &mut Conn, company: &str) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar::<Db, String>(
        "SELECT name FROM analytics_apps WHERE company = $1 ORDER BY name",
    )
    .bind(company)
    .fetch_all(&mut *c)
    .await?)
}

pub(crate) async fn put_app(c: &mut Conn, row: &AppRow) -> Result<(), StoreError> {
    sqlx::query::<Db>(
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
    c: &mut Conn,
    company: &str,
    name: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query::<Db>("DELETE FROM analytics_apps WHERE company = $1 AND name = $2")
        .bind(company)
        .bind(name)
        .execute(&mut *c)
        .await?;
    Ok(done.rows_affected() > 0)
}
