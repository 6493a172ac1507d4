//! `GET /admin/v1/audit`: the company's audit log, newest first (permission View Audit Log).

use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use common::ApiError;
use serde_json::{json, Value};

use crate::api::{iso, page, Query};
use crate::caller::{Caller, ViewAuditLog};
use crate::state::AdminState;
use crate::storage::{self, AuditEntry, AuditFilter};

pub fn entry_view(e: &AuditEntry) -> Value {
    json!({
        "id": e.id.to_string(),
        "at": iso(e.at),
        "actor": e.actor,
        "actor_id": e.actor_id,
        "action": e.action,
        "resource_type": e.resource_type,
        "resource_id": e.resource_id,
        "version": e.version,
        "changes": e.changes,
    })
}

pub async fn list(
    caller: Caller<ViewAuditLog>,
    state: Data<AdminState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = Query::parse(
        &req,
        &["limit", "cursor", "resource_type", "resource_id", "actor"],
    )?;
    let limit = q.limit()?;
    let before =
        match q.cursor("audit")? {
            None => None,
            Some(k) => Some(k.parse::<i64>().map_err(|_| {
                ApiError::new(common::ErrorCode::InvalidCursor, "cursor is not valid")
            })?),
        };
    let resource_type = q.get("resource_type").map(str::to_string);
    if let Some(t) = &resource_type {
        if !["user", "role", "client"].contains(&t.as_str()) {
            return Err(ApiError::field(
                "resource_type",
                "resource_type must be user, role or client",
            ));
        }
    }
    let filter = AuditFilter {
        resource_type,
        resource_id: q.get("resource_id").map(str::to_string),
        actor: q.get("actor").map(str::to_string),
    };
    let rows = storage::list_audit(&state.db, &caller.company, &filter, before, limit + 1).await?;
    Ok(HttpResponse::Ok().json(page("audit", rows, limit, |e| e.id.to_string(), entry_view)))
}
