//! `GET /admin/v1/audit`: the company's audit log, newest first (permission View Audit Log).

use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use common::ApiError;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::api::{iso, page, Query};
use crate::caller::{Caller, ViewAuditLog};
use crate::state::AdminState;
use crate::storage::{self, AuditEntry, AuditFilter};

/// One successful change: who made it, to what, and the fields that differ.
#[derive(Serialize, ToSchema)]
#[schema(as = AuditEntry)]
pub struct AuditRecord<'a> {
    /// Newer entries have larger ids (a decimal string).
    id: String,
    /// ISO 8601 UTC with milliseconds.
    at: String,
    /// The username of the caller who made the change.
    actor: &'a str,
    actor_id: &'a str,
    /// `create`, `replace`, `delete` or `rotate_secret`.
    action: &'a str,
    /// `user`, `role` or `client`.
    resource_type: &'a str,
    resource_id: &'a str,
    /// The version the change produced; null on delete.
    #[schema(required = true)]
    version: Option<i64>,
    /// `{field: {"from": old, "to": new}}` for the fields that differ; secrets read "(changed)".
    #[schema(value_type = Object)]
    changes: &'a Value,
}

pub fn entry_view(e: &AuditEntry) -> Value {
    serde_json::to_value(AuditRecord::of(e)).expect("an audit entry serializes")
}

impl<'a> AuditRecord<'a> {
    fn of(e: &'a AuditEntry) -> AuditRecord<'a> {
        AuditRecord {
            id: e.id.to_string(),
            at: iso(e.at),
            actor: &e.actor,
            actor_id: &e.actor_id,
            action: &e.action,
            resource_type: &e.resource_type,
            resource_id: &e.resource_id,
            version: e.version,
            changes: &e.changes,
        }
    }
}

/// A page of audit entries (the envelope of `crate::api::page`).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct AuditPage<'a> {
    items: Vec<AuditRecord<'a>>,
    /// The limit applied.
    limit: i64,
    /// Pass as `cursor` for the next page; null on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// List the audit log
///
/// Newest first. Requires the View Audit Log permission.
#[utoipa::path(get, operation_id = "listAudit", path = "/admin/v1/audit", tag = "audit",
    params(crate::openapi::PageQuery, crate::openapi::AuditQuery),
    responses((status = 200, description = "A page of audit entries", body = AuditPage)))]
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
    let mut rows =
        storage::list_audit(&state.db, &caller.company, &filter, before, limit + 1).await?;
    Ok(HttpResponse::Ok().json(page(
        "audit",
        &mut rows,
        limit,
        |e| e.id.to_string(),
        entry_view,
    )))
}
