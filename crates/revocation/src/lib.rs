//! The revocation list of access tokens. Access tokens are JWTs that services verify on their own, so a
//! token revoked before it expires must be looked up here. Two kinds of entry: one token by its id (RFC
//! 7009 revocation, replayed authorization codes, a refresh family revoked on reuse; written by the token
//! service), and every token a holder — a client or a user — was issued in its state before an instant
//! (a deleted client or one whose secret was rotated, a blocked, deactivated or deleted user; written by
//! the administration API in the transaction of the change). A token carries that state: when its
//! client's secret was set and when its user's sessions became valid; comparing those rather than the
//! issue time also revokes tokens a replica issued from a record it read before the change. Every service that accepts tokens asks
//! `is_token_revoked` about both at once. This crate alone owns the tables; services go through these
//! functions, on the pool or inside their own transactions.

mod sql;

use common::cache::TtlCache;
use common::db::{Database, Handle, Migrations, Probe, ProbeArgument, StoreError};
use common::dispatch;
use common::jwt::AccessClaims;

use sql::Statements;

/// The revocation list's tables (versions 3001 to 3999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};

/// Whose tokens are revoked all at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder<'a> {
    /// A client, by its id: its tokens, client-credentials and user tokens alike, issued under a secret
    /// set before the instant (every one of them when the client is deleted: `ALL`).
    Client(&'a str),
    /// A user, by its id: the user's tokens, whatever the client, issued while the user's sessions were
    /// valid from before the instant (every one of them when the user is deleted: `ALL`).
    User(&'a str),
}

impl Holder<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Holder::Client(_) => "client",
            Holder::User(_) => "user",
        }
    }

    fn id(&self) -> &str {
        match self {
            Holder::Client(id) | Holder::User(id) => id,
        }
    }
}

/// The instant of `revoke_issued_before` that revokes every token of the holder, whenever issued.
pub const ALL: i64 = i64::MAX;

/// What a check needs to know of an access token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued<'a> {
    pub jti: &'a str,
    pub company: &'a str,
    pub client_id: &'a str,
    /// When the secret that authenticated the issue was set (0 when the token does not say).
    pub client_secret_set_ms: i64,
    /// The user of a user token.
    pub user_id: Option<&'a str>,
    /// The user's `sessions_valid_after_ms` at the issue (0 when the token does not say).
    pub sessions_valid_after_ms: i64,
}

impl<'a> From<&'a AccessClaims> for Issued<'a> {
    fn from(claims: &'a AccessClaims) -> Self {
        Issued {
            jti: &claims.jti,
            company: &claims.company,
            client_id: &claims.client_id,
            client_secret_set_ms: claims.client_secret_set_ms.unwrap_or(0),
            user_id: claims.is_user_token().then_some(claims.sub.as_str()),
            sessions_valid_after_ms: claims.sessions_valid_after_ms.unwrap_or(0),
        }
    }
}

/// Revokes the access token `jti` of `company` until `expires_ms`, when it would expire anyway.
pub async fn revoke<'a>(
    h: impl Into<Handle<'a>>,
    jti: &str,
    company: &str,
    expires_ms: i64,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::revoke(jti, company, expires_ms))
}

/// Whether the access token `jti` is listed as revoked by its id.
pub async fn is_revoked<'a>(h: impl Into<Handle<'a>>, jti: &str) -> Result<bool, StoreError> {
    dispatch!(h, Statements::is_revoked(jti))
}

/// Revokes every token of `holder` of `company` issued in its state before `before_ms` (see `Holder`;
/// `ALL` for every one), keeping the entry until `kept_until_ms` (`None`: for good). A later instant
/// replaces an earlier one; an earlier one changes nothing but how long the entry is kept.
pub async fn revoke_issued_before<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    holder: Holder<'_>,
    before_ms: i64,
    kept_until_ms: Option<i64>,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::revoke_issued_before(
            company,
            holder.kind(),
            holder.id(),
            before_ms,
            kept_until_ms
        )
    )
}

/// The instant before which `holder`'s tokens are revoked, if they are.
pub async fn revoked_before<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    holder: Holder<'_>,
) -> Result<Option<i64>, StoreError> {
    dispatch!(
        h,
        Statements::revoked_before(company, holder.kind(), holder.id())
    )
}

/// Whether the access token is revoked: by its id, or with its client or its user.
pub async fn is_token_revoked<'a>(
    h: impl Into<Handle<'a>>,
    token: &Issued<'_>,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::is_token_revoked(&token_revoked(token)))
}

/// `is_token_revoked`, from `cache` when it holds the answer for the token's id (a replica reuses an
/// answer for the cache's time to live, its services' `revocation_cache_ms`), else from the list, and
/// then remembered.
pub async fn is_token_revoked_cached(
    db: &Database,
    cache: &TtlCache<String, bool>,
    token: &Issued<'_>,
) -> Result<bool, StoreError> {
    if let Some(revoked) = cache.get(token.jti) {
        return Ok(revoked);
    }
    let revoked = is_token_revoked(db, token).await?;
    cache.insert(token.jti.to_string(), revoked);
    Ok(revoked)
}

/// Whether the access token is revoked, asked inside another owner's statement (see `Probe`).
pub fn token_revoked<'a>(token: &Issued<'a>) -> Probe<'a> {
    Probe {
        expression: "(EXISTS (SELECT 1 FROM access_token_revocations WHERE jti = {0}) \
             OR EXISTS (SELECT 1 FROM tokens_revoked_before WHERE company = {1} \
             AND ((holder_kind = 'client' AND holder_id = {2} AND before_ms > {3}) \
             OR (holder_kind = 'user' AND holder_id = {4} AND before_ms > {5}))))",
        arguments: vec![
            ProbeArgument::Text(token.jti),
            ProbeArgument::Text(token.company),
            ProbeArgument::Text(token.client_id),
            ProbeArgument::Integer(token.client_secret_set_ms),
            // No user id is empty: a client-credentials token matches no user's entry.
            ProbeArgument::Text(token.user_id.unwrap_or("")),
            ProbeArgument::Integer(token.sessions_valid_after_ms),
        ],
    }
}

/// Forgets revocations of tokens that have expired by `now_ms`, and entries of holders kept until
/// before it.
pub async fn purge_expired<'a>(h: impl Into<Handle<'a>>, now_ms: i64) -> Result<u64, StoreError> {
    dispatch!(h, Statements::purge_expired(now_ms))
}
