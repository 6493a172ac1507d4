//! Recording changes in the audit log: who (the calling account), when, what (action, resource) and
//! which fields changed from what to what. Secrets never appear: a new password or client secret is
//! recorded as `"(changed)"`.

use chrono::Utc;
use common::directory::User;
use common::ApiError;
use serde_json::Value;

use crate::state::AdminState;
use crate::storage::AuditEntry;

pub const CREATE: &str = "create";
pub const REPLACE: &str = "replace";
pub const DELETE: &str = "delete";
pub const ROTATE_SECRET: &str = "rotate_secret";

pub const USER: &str = "user";
pub const ROLE: &str = "role";
pub const CLIENT: &str = "client";

/// What a secret is recorded as.
pub const CHANGED: &str = "(changed)";

pub struct Change<'a> {
    pub action: &'a str,
    pub resource_type: &'a str,
    pub resource_id: &'a str,
    /// The version the change produced; `None` for a deletion.
    pub version: Option<i64>,
    pub changes: Value,
}

pub async fn record(
    state: &AdminState,
    company: &str,
    actor: &User,
    change: Change<'_>,
) -> Result<(), ApiError> {
    // Every change passes here once it is stored: this replica's cached reads must not outlive it.
    state.forget_reads();
    state
        .store
        .insert_audit(&AuditEntry {
            id: 0,
            company: company.to_string(),
            at: Utc::now(),
            actor: actor.username.clone(),
            actor_id: actor.id.clone(),
            action: change.action.to_string(),
            resource_type: change.resource_type.to_string(),
            resource_id: change.resource_id.to_string(),
            version: change.version,
            changes: change.changes,
        })
        .await?;
    Ok(())
}
