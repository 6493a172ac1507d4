//! The token service's own storage (signing keys, codes, refresh tokens, revocations, login sessions),
//! a port with PostgreSQL and SQLite adapters compiled from `store_sql.rs`.

use std::sync::Arc;

use async_trait::async_trait;
use common::db::{Database, Migrations, StoreError};

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
    Unknown,
}

#[async_trait]
pub trait TokenStore: Send + Sync + 'static {
    async fn company_exists(&self, company: &str) -> Result<bool, StoreError>;

    async fn signing_keys(&self, company: &str) -> Result<Vec<SigningKeyRecord>, StoreError>;
    async fn insert_signing_key(&self, key: &SigningKeyRecord) -> Result<(), StoreError>;
    /// Retires every active key of `company` (of `alg`, or all algorithms).
    async fn retire_signing_keys(
        &self,
        company: &str,
        alg: Option<&str>,
        at_ms: i64,
    ) -> Result<(), StoreError>;
    /// Deletes keys retired before `before_ms`: they are no longer published.
    async fn delete_keys_retired_before(
        &self,
        company: &str,
        before_ms: i64,
    ) -> Result<u64, StoreError>;

    async fn insert_code(&self, code: &CodeRecord) -> Result<(), StoreError>;
    async fn use_code(&self, code_hash: &str, now_ms: i64) -> Result<CodeUse, StoreError>;
    async fn set_code_access_jti(&self, code_hash: &str, jti: &str) -> Result<(), StoreError>;
    /// Records that the spent code was presented again.
    async fn mark_code_replayed(&self, code_hash: &str, now_ms: i64) -> Result<(), StoreError>;
    /// Whether the code was presented again after its first use.
    async fn code_replayed(&self, code_hash: &str) -> Result<bool, StoreError>;

    async fn insert_refresh(&self, token: &RefreshRecord) -> Result<(), StoreError>;
    async fn get_refresh(&self, token_hash: &str) -> Result<Option<RefreshRecord>, StoreError>;
    /// Marks the token rotated; false when it was already rotated or revoked (a concurrent or repeated use).
    async fn rotate_refresh(&self, token_hash: &str, now_ms: i64) -> Result<bool, StoreError>;
    /// Revokes every refresh token of the family and the access tokens issued with them.
    async fn revoke_family(&self, family_id: &str, now_ms: i64) -> Result<(), StoreError>;
    /// Revokes every refresh token of a user (blocked or deleted users).
    async fn revoke_user_tokens(
        &self,
        company: &str,
        user_id: &str,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    async fn revoke_access(
        &self,
        jti: &str,
        company: &str,
        expires_ms: i64,
    ) -> Result<(), StoreError>;
    async fn is_access_revoked(&self, jti: &str) -> Result<bool, StoreError>;

    async fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError>;
    async fn get_session(&self, id_hash: &str) -> Result<Option<SessionRecord>, StoreError>;

    /// Deletes expired codes, sessions and revocation entries.
    async fn purge_expired(&self, now_ms: i64) -> Result<(), StoreError>;
}

pub fn open_token_store(db: &Database) -> Arc<dyn TokenStore> {
    match db {
        Database::Postgres(pool) => Arc::new(adapters::postgres::SqlTokenStore(pool.clone())),
        Database::Sqlite(pool) => Arc::new(adapters::sqlite::SqlTokenStore(pool.clone())),
    }
}

mod adapters {
    use super::*;
    common::sql_adapters!("store_sql.rs");
}
