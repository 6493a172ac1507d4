//! The administration service's own tables: the audit log, the shared rate counters and the replica
//! heartbeats. One public function per operation, on the pool (`&db`) or in a transaction (`&mut tx`),
//! running a statement of `sql.rs` on either database.

mod sql;

use chrono::{DateTime, Utc};
use common::db::{Handle, Migrations, StoreError};
use common::dispatch;

use sql::Statements;

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

/// Appends an entry (its `id` is assigned) and returns the id.
pub async fn insert_audit<'a>(
    h: impl Into<Handle<'a>>,
    entry: &AuditEntry,
) -> Result<i64, StoreError> {
    dispatch!(h, Statements::insert_audit(entry))
}

/// Entries of `company`, newest first, with ids strictly below `before`.
pub async fn list_audit<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    filter: &AuditFilter,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<AuditEntry>, StoreError> {
    dispatch!(h, Statements::list_audit(company, filter, before, limit))
}

/// Adds `delta` requests to a shared counter and returns its new total.
pub async fn add_rate_count<'a>(
    h: impl Into<Handle<'a>>,
    account: &str,
    window_kind: &str,
    window_start: i64,
    delta: i64,
) -> Result<i64, StoreError> {
    dispatch!(
        h,
        Statements::add_rate_count(account, window_kind, window_start, delta)
    )
}

/// Records that `replica_id` is alive and returns how many replicas were seen since `alive_since_ms`.
pub async fn heartbeat<'a>(
    h: impl Into<Handle<'a>>,
    replica_id: &str,
    now_ms: i64,
    alive_since_ms: i64,
) -> Result<i64, StoreError> {
    dispatch!(h, Statements::heartbeat(replica_id, now_ms, alive_since_ms))
}

/// Deletes counters of windows that are over and heartbeats of replicas long gone.
pub async fn purge_rate_state<'a>(
    h: impl Into<Handle<'a>>,
    seconds_before: i64,
    days_before: i64,
    replicas_before_ms: i64,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::purge_rate_state(seconds_before, days_before, replicas_before_ms)
    )
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
