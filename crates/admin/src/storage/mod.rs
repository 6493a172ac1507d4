//! The administration service's own storage: the audit log, the shared rate counters and the replica
//! heartbeats, plus the one statement it runs on the token service's table (revoking a blocked user's
//! refresh tokens). A port with PostgreSQL and SQLite adapters compiled from `store_sql.rs`.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use common::db::{Database, Migrations, StoreError};

/// Migrations of the administration service's tables (versions 2001 and up).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};

/// One recorded change.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub id: i64,
    pub company: String,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub actor_id: String,
    pub action: String,
    pub resource_type: String,
    pub resource_id: String,
    pub version: Option<i64>,
    pub changes: serde_json::Value,
}

/// Filters of an audit listing.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub resource_type: Option<String>,
    pub resource_id: Option<String>,
    pub actor: Option<String>,
}

#[async_trait]
pub trait AdminStore: Send + Sync + 'static {
    /// Appends an entry (its `id` is assigned) and returns the id.
    async fn insert_audit(&self, entry: &AuditEntry) -> Result<i64, StoreError>;
    /// Entries of `company`, newest first, with ids strictly below `before`.
    async fn list_audit(
        &self,
        company: &str,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError>;

    /// Revokes every live refresh token of a user (table `refresh_tokens` of the token service).
    async fn revoke_user_refresh_tokens(
        &self,
        company: &str,
        user_id: &str,
        now_ms: i64,
    ) -> Result<u64, StoreError>;
    /// Whether the token service revoked this access token (table `revoked_access_tokens`).
    async fn is_access_revoked(&self, jti: &str) -> Result<bool, StoreError>;

    /// Adds `delta` requests to a shared counter and returns its new total.
    async fn add_rate_count(
        &self,
        account: &str,
        window_kind: &str,
        window_start: i64,
        delta: i64,
    ) -> Result<i64, StoreError>;
    /// Records that `replica_id` is alive and returns how many replicas were seen since `alive_since_ms`.
    async fn heartbeat(
        &self,
        replica_id: &str,
        now_ms: i64,
        alive_since_ms: i64,
    ) -> Result<i64, StoreError>;
    /// Deletes counters of windows that are over and heartbeats of replicas long gone.
    async fn purge_rate_state(
        &self,
        seconds_before: i64,
        days_before: i64,
        replicas_before_ms: i64,
    ) -> Result<(), StoreError>;
}

pub fn open_admin_store(db: &Database) -> Arc<dyn AdminStore> {
    match db {
        Database::Postgres(pool) => Arc::new(adapters::postgres::SqlAdminStore(pool.clone())),
        Database::Sqlite(pool) => Arc::new(adapters::sqlite::SqlAdminStore(pool.clone())),
    }
}

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: i64,
    company: String,
    at_ms: i64,
    actor: String,
    actor_id: String,
    action: String,
    resource_type: String,
    resource_id: String,
    version: Option<i64>,
    changes: String,
}

impl From<AuditRow> for AuditEntry {
    fn from(r: AuditRow) -> Self {
        AuditEntry {
            id: r.id,
            company: r.company,
            at: DateTime::from_timestamp_millis(r.at_ms).unwrap_or_default(),
            actor: r.actor,
            actor_id: r.actor_id,
            action: r.action,
            resource_type: r.resource_type,
            resource_id: r.resource_id,
            version: r.version,
            changes: serde_json::from_str(&r.changes).unwrap_or(serde_json::Value::Null),
        }
    }
}

mod adapters {
    use super::*;
    common::sql_adapters!("store_sql.rs");
}
