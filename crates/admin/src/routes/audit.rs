//! `GET /admin/v1/audit`: the company's audit log, newest first (permission View Audit Log).

use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use common::ApiError;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::api::{invalid_cursor, iso, page, Query};
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

/// The id before which the page starts, from `cursor`: the id of the last entry of the previous page;
/// any such number is a position (the entries older than it).
fn decode_cursor(text: &str) -> Result<i64, ApiError> {
    match text.parse::<i64>() {
        Ok(id) if text.len() <= 18 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(id),
        _ => Err(invalid_cursor(
            "cursor is the next_cursor of a page: an entry id, 1 to 18 digits",
        )),
    }
}

/// List the audit log
///
/// Newest first. Requires the View Audit Log permission.
#[utoipa::path(get, operation_id = "listAudit", path = "/admin/v1/audit", tag = "audit",
    params(crate::openapi::AuditPageQuery, crate::openapi::AuditQuery),
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
    let before = q.cursor_with(decode_cursor)?;
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
    Ok(HttpResponse::Ok().json(page(&mut rows, limit, |e| e.id.to_string(), entry_view)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented form of an audit cursor is exactly what the listing reads.
    #[test]
    fn the_cursor_pattern_is_what_is_read() {
        let pattern =
            regex::Regex::new(&crate::openapi::cursor_pattern("/admin/v1/audit")).unwrap();
        let long = "9".repeat(18);
        let too_long = "1".repeat(19);
        for text in [
            "0", "1042", &long, &too_long, "-1", "+1", "1.0", " 1", "1\n", "x",
        ] {
            assert_eq!(
                pattern.is_match(text),
                decode_cursor(text).is_ok(),
                "{text:?}"
            );
        }
        assert!(pattern.is_match(""), "empty is the first page");
    }
}
