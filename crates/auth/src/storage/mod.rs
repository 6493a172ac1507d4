//! The token service's own tables (signing keys, codes, refresh tokens, login sessions): one public
//! function per operation, on the pool (`&db`) or in a transaction (`&mut tx`), running a statement of
//! `sql.rs` on either database. Access tokens are revoked through the revocation crate,
//! which owns that list.

use common::db::{Database, Handle, Migrations, StoreError};
use common::dispatch;

use sql::Statements;

/// Migrations of the token service's tables (versions 1001 and up).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SigningKeyRecord {
    pub kid: String,
    pub company: String,
    pub alg: String,
    pub sealed_private: Vec<u8>,
    pub public_jwk: String,
    pub created_ms: i64,
    pub retired_ms: Option<i64>,
}

/// An access token issued from a refresh token of a family and not yet expired: what revoking the
/// family revokes.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LiveAccessToken {
    pub jti: String,
    pub company: String,
    pub expires_ms: i64,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CodeRecord {
    pub code_hash: String,
    pub company: String,
    pub client_id: String,
    pub user_id: String,
    pub redirect_uri: String,
    pub scope: String,
    pub requested_refresh: bool,
    pub nonce: Option<String>,
    pub code_challenge: Option<String>,
    pub auth_time_ms: i64,
    pub session_id: Option<String>,
    pub family_id: String,
    pub expires_ms: i64,
    pub used_ms: Option<i64>,
    pub access_jti: Option<String>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RefreshRecord {
    pub token_hash: String,
    pub family_id: String,
    pub company: String,
    pub client_id: String,
    pub user_id: String,
    pub scope: String,
    pub auth_time_ms: i64,
    pub access_jti: Option<String>,
    pub access_exp_ms: Option<i64>,
    pub created_ms: i64,
    pub expires_ms: Option<i64>,
    pub used_ms: Option<i64>,
    pub revoked_ms: Option<i64>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRecord {
    pub id_hash: String,
    pub company: String,
    pub user_id: String,
    pub auth_time_ms: i64,
    pub expires_ms: i64,
}

/// The outcome of presenting an authorization code.
#[derive(Debug)]
pub enum CodeUse {
    /// First use: the code is now spent.
    First(CodeRecord),
    /// The code was spent before: a replay.
    Replay(CodeRecord),
    /// The code was issued to another client (or company): left as it was, neither spent nor replayed.
    OtherClient,
    Unknown,
}

pub async fn signing_keys<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Vec<SigningKeyRecord>, StoreError> {
    dispatch!(h, Statements::signing_keys(company))
}

pub async fn insert_signing_key<'a>(
    h: impl Into<Handle<'a>>,
    key: &SigningKeyRecord,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_signing_key(key))
}

/// Retires every active key of `company` (of `alg`, or all algorithms).
pub async fn retire_signing_keys<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    alg: Option<&str>,
    at_ms: i64,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::retire_signing_keys(company, alg, at_ms))
}

/// Deletes keys retired before `before_ms`: they are no longer published.
pub async fn delete_keys_retired_before<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    before_ms: i64,
) -> Result<u64, StoreError> {
    dispatch!(
        h,
        Statements::delete_keys_retired_before(company, before_ms)
    )
}

pub async fn insert_code<'a>(
    h: impl Into<Handle<'a>>,
    code: &CodeRecord,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_code(code))
}

/// Spends the code if it was issued to `client_id` of `company` and is unspent; a code of another client
/// is left alone, so presenting it costs its rightful client nothing.
pub async fn use_code<'a>(
    h: impl Into<Handle<'a>>,
    code_hash: &str,
    now_ms: i64,
    company: &str,
    client_id: &str,
) -> Result<CodeUse, StoreError> {
    dispatch!(
        h,
        Statements::use_code(code_hash, now_ms, company, client_id)
    )
}

pub async fn set_code_access_jti<'a>(
    h: impl Into<Handle<'a>>,
    code_hash: &str,
    jti: &str,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::set_code_access_jti(code_hash, jti))
}

/// Records that the spent code was presented again.
pub async fn mark_code_replayed<'a>(
    h: impl Into<Handle<'a>>,
    code_hash: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::mark_code_replayed(code_hash, now_ms))
}

/// Whether the code was presented again after its first use.
pub async fn code_replayed<'a>(
    h: impl Into<Handle<'a>>,
    code_hash: &str,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::code_replayed(code_hash))
}

pub async fn insert_refresh<'a>(
    h: impl Into<Handle<'a>>,
    token: &RefreshRecord,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_refresh(token))
}

pub async fn get_refresh<'a>(
    h: impl Into<Handle<'a>>,
    token_hash: &str,
) -> Result<Option<RefreshRecord>, StoreError> {
    dispatch!(h, Statements::get_refresh(token_hash))
}

/// Marks the token rotated and stores its successor, in one transaction; false, and nothing stored, when
/// it was already rotated or revoked (a concurrent or repeated use). The successor is never visible
/// without the rotation that the losers of a race see, so their `revoke_family` finds it (see there).
pub async fn rotate_refresh(
    db: &Database,
    token_hash: &str,
    now_ms: i64,
    successor: &RefreshRecord,
) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    if !dispatch!(&mut tx, Statements::rotate_refresh(token_hash, now_ms))? {
        tx.rollback().await?;
        return Ok(false);
    }
    dispatch!(&mut tx, Statements::insert_refresh(successor))?;
    tx.commit().await?;
    Ok(true)
}

/// Revokes every refresh token of a user (blocked or deleted users).
pub async fn revoke_user_tokens<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    user_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::revoke_user_tokens(company, user_id, now_ms))
}

pub async fn insert_session<'a>(
    h: impl Into<Handle<'a>>,
    session: &SessionRecord,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_session(session))
}

pub async fn get_session<'a>(
    h: impl Into<Handle<'a>>,
    id_hash: &str,
) -> Result<Option<SessionRecord>, StoreError> {
    dispatch!(h, Statements::get_session(id_hash))
}

/// Ends a login session; false when there was none.
pub async fn delete_session<'a>(
    h: impl Into<Handle<'a>>,
    id_hash: &str,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::delete_session(id_hash))
}

/// Deletes expired codes, sessions and refresh tokens (the revocation list purges its own entries:
/// `revocation::purge_expired`).
pub async fn purge_expired<'a>(h: impl Into<Handle<'a>>, now_ms: i64) -> Result<(), StoreError> {
    dispatch!(h, Statements::purge_expired(now_ms))
}

/// Revokes every refresh token of the family and the access tokens still live that were issued with
/// them (through the revocation list), in one transaction.
///
/// A rotation in flight (`rotate_refresh`) holds the lock of the token it rotates until its successor is
/// committed. Marking that token waits for it, but on PostgreSQL the statement that waited does not see
/// the successor, committed after the statement began: so the marking is repeated until it finds nothing
/// left to mark, and only then are the access tokens of the family (the successor's included) looked up.
/// A rotation that comes after the mark finds its token revoked and stores nothing.
pub async fn revoke_family(db: &Database, family_id: &str, now_ms: i64) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    while dispatch!(&mut tx, Statements::mark_family_revoked(family_id, now_ms))? > 0 {}
    let live = dispatch!(
        &mut tx,
        Statements::family_live_access_tokens(family_id, now_ms)
    )?;
    for token in &live {
        revocation::revoke(&mut tx, &token.jti, &token.company, token.expires_ms).await?;
    }
    tx.commit().await
}

mod sql;
