//! The revocation list's statements, written once and compiled for each database (`Db` comes from
//! `postgres.rs` or `sqlite.rs`).

use common::db::{Probe, ProbeArgument, StoreError};

use super::Db;

type Conn = <Db as sqlx::Database>::Connection;

pub(crate) async fn revoke(
    c: &mut Conn,
    jti: &str,
    company: &str,
    expires_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query::<Db>(
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

pub(crate) async fn is_revoked(c: &mut Conn, jti: &str) -> Result<bool, StoreError> {
    let found = sqlx::query_scalar::<Db, i64>(
        "SELECT CAST(1 AS BIGINT) FROM access_token_revocations WHERE jti = $1",
    )
    .bind(jti)
    .fetch_optional(&mut *c)
    .await?;
    Ok(found.is_some())
}

pub(crate) async fn revoke_issued_before(
    c: &mut Conn,
    company: &str,
    kind: &str,
    id: &str,
    before_ms: i64,
    kept_until_ms: Option<i64>,
) -> Result<(), StoreError> {
    sqlx::query::<Db>(
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
    c: &mut Conn,
    company: &str,
    kind: &str,
    id: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar::<Db, i64>(
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
pub(crate) async fn is_token_revoked(c: &mut Conn, probe: &Probe<'_>) -> Result<bool, StoreError> {
    let sql = format!("SELECT {} AS revoked", probe.sql(1));
    let mut query = sqlx::query_scalar::<Db, bool>(&sql);
    for argument in &probe.arguments {
        query = match *argument {
            ProbeArgument::Text(text) => query.bind(text),
            ProbeArgument::Integer(number) => query.bind(number),
        };
    }
    Ok(query.fetch_one(&mut *c).await?)
}

pub(crate) async fn purge_expired(c: &mut Conn, now_ms: i64) -> Result<u64, StoreError> {
    let tokens = sqlx::query::<Db>("DELETE FROM access_token_revocations WHERE expires_ms < $1")
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
    let holders = sqlx::query::<Db>("DELETE FROM tokens_revoked_before WHERE kept_until_ms < $1")
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
    Ok(tokens.rows_affected() + holders.rows_affected())
}
