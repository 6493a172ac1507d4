//! Recording changes in the audit log: who (the calling account), when, what (action, resource) and
//! which fields changed from what to what. An entry is written in the transaction of the change it
//! records, so a change is never stored without its entry nor an entry without its change. Secrets never
//! appear: a new password or client secret is recorded as `"(changed)"`.

use chrono::Utc;
use common::db::Tx;
use common::ApiError;
use directory::User;
use serde_json::Value;

use crate::caller::Caller;
use crate::state::AdminState;
use crate::storage::{self, AuditEntry};

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

/// Appends the entry of `change`, made by `actor`, inside the change's transaction.
pub async fn record(
    tx: &mut Tx,
    company: &str,
    actor: &User,
    change: Change<'_>,
) -> Result<(), ApiError> {
    storage::insert_audit(
        tx,
        &AuditEntry {
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
        },
    )
    .await?;
    Ok(())
}

/// Records `change` in `tx`, made by `caller` in its company, and commits the change with its entry;
/// then this replica forgets the reads it cached, so its own change shows at once.
pub async fn commit<P>(
    state: &AdminState,
    mut tx: Tx,
    caller: &Caller<P>,
    change: Change<'_>,
) -> Result<(), ApiError> {
    record(&mut tx, &caller.company, caller.user(), change).await?;
    tx.commit().await?;
    state.forget_reads();
    Ok(())
}
