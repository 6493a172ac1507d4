//! The statements of callback secret generations, compiled for each database like `sql.rs`.

use common::db::StoreError;

use super::super::callback_secrets::SecretGeneration;
use super::Db;

type Conn = <Db as sqlx::Database>::Connection;

pub(crate) async fn secret_generation(
    c: &mut Conn,
    company: &str,
) -> Result<Option<SecretGeneration>, StoreError> {
    Ok(sqlx::query_as::<Db, SecretGeneration>(
        "SELECT generation, rotated FROM analytics_callback_secrets WHERE company = $1",
    )
    .bind(company)
    .fetch_optional(&mut *c)
    .await?)
}

pub(crate) async fn rotate_secret(
    c: &mut Conn,
    company: &str,
    rotated: &str,
) -> Result<SecretGeneration, StoreError> {
    Ok(sqlx::query_as::<Db, SecretGeneration>(
        "INSERT INTO analytics_callback_secrets (company, generation, rotated) VALUES ($1, 1, $2) \
         ON CONFLICT (company) DO UPDATE \
         SET generation = analytics_callback_secrets.generation + 1, rotated = excluded.rotated \
         RETURNING generation, rotated",
    )
    .bind(company)
    .bind(rotated)
    .fetch_one(&mut *c)
    .await?)
}
