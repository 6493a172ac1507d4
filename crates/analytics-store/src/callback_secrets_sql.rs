//! The statements of callback secret generations, written once for both databases like `sql.rs`.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rows::SecretGeneration;
use crate::sql::Statements;

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    SecretGeneration: Reads<D>,
{
    pub(crate) async fn secret_generation(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Option<SecretGeneration>, StoreError> {
        Ok(sqlx::query_as::<D, SecretGeneration>(
            "SELECT generation, rotated, previous_signs FROM analytics_callback_secrets WHERE company = $1",
        )
        .bind(company)
        .fetch_optional(&mut *c)
        .await?)
    }

    /// Moves the company to its next generation; `previous_signs` false when the company is deleted, so that
    /// nothing given out before signs for a company made again under its name.
    pub(crate) async fn rotate_secret(
        c: &mut D::Connection,
        company: &str,
        rotated: &str,
        previous_signs: bool,
    ) -> Result<SecretGeneration, StoreError> {
        Ok(sqlx::query_as::<D, SecretGeneration>(
            "INSERT INTO analytics_callback_secrets (company, generation, rotated, previous_signs) \
             VALUES ($1, 1, $2, $3) \
             ON CONFLICT (company) DO UPDATE \
             SET generation = analytics_callback_secrets.generation + 1, rotated = excluded.rotated, \
             previous_signs = excluded.previous_signs \
             RETURNING generation, rotated, previous_signs",
        )
        .bind(company)
        .bind(rotated)
        .bind(previous_signs)
        .fetch_one(&mut *c)
        .await?)
    }
}
