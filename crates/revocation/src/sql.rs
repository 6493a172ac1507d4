//! The revocation list's statements, written once and compiled for each database (`Db` comes from
//! `postgres.rs` or `sqlite.rs`).

use common::db::StoreError;

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

pub(crate) async fn purge_expired(c: &mut Conn, now_ms: i64) -> Result<u64, StoreError> {
    let done = sqlx::query::<Db>("DELETE FROM access_token_revocations WHERE expires_ms < $1")
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
    Ok(done.rows_affected())
}
