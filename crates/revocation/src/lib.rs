//! The revocation list of access tokens. Access tokens are JWTs that services verify on their own, so a
//! token revoked before it expires must be looked up here. The token service writes the list (RFC 7009
//! revocation, replayed authorization codes); the administration API reads it. This crate alone owns the
//! table; both services go through these functions, on the pool or inside their own transactions.

mod postgres;
mod sqlite;

use common::cache::TtlCache;
use common::db::{Database, Handle, Migrations, Probe, ProbeArgument, StoreError};
use common::dispatch;

/// The revocation list's table (versions 3001 to 3999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};

/// Revokes the access token `jti` of `company` until `expires_ms`, when it would expire anyway.
pub async fn revoke<'a>(
    h: impl Into<Handle<'a>>,
    jti: &str,
    company: &str,
    expires_ms: i64,
) -> Result<(), StoreError> {
    dispatch!(h, revoke(jti, company, expires_ms))
}

/// Whether the access token `jti` is revoked.
pub async fn is_revoked<'a>(h: impl Into<Handle<'a>>, jti: &str) -> Result<bool, StoreError> {
    dispatch!(h, is_revoked(jti))
}

/// Whether the access token `jti` is revoked, from `cache` when it holds the answer (a replica reuses an
/// answer for the cache's time to live, its services' `revocation_cache_ms`), else from the list, and
/// then remembered.
pub async fn is_revoked_cached(
    db: &Database,
    cache: &TtlCache<String, bool>,
    jti: &str,
) -> Result<bool, StoreError> {
    if let Some(revoked) = cache.get(jti) {
        return Ok(revoked);
    }
    let revoked = is_revoked(db, jti).await?;
    cache.insert(jti.to_string(), revoked);
    Ok(revoked)
}

/// Whether the access token `jti` is revoked, asked inside another owner's statement (see `Probe`).
pub fn revoked(jti: &str) -> Probe<'_> {
    Probe {
        expression: "EXISTS (SELECT 1 FROM access_token_revocations WHERE jti = {0})",
        arguments: vec![ProbeArgument::Text(jti)],
    }
}

/// Forgets revocations of tokens that have expired by `now_ms`.
pub async fn purge_expired<'a>(h: impl Into<Handle<'a>>, now_ms: i64) -> Result<u64, StoreError> {
    dispatch!(h, purge_expired(now_ms))
}
