//! `GET /admin/v1/audit`: the company's audit log, newest first (permission View Audit Log).

use actix_web::web::Data;
use actix_web::HttpResponse;
use common::ApiError;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use crate::api::{iso, page, Page};
use crate::caller::{Caller, ViewAuditLog};
use crate::query::{Limit, Query};
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

/// A page of audit entries, as the listing answers it.
pub type AuditPage<'a> = Page<AuditRecord<'a>>;

pub fn entry_view(e: &AuditEntry) -> AuditRecord<'_> {
    AuditRecord::of(e)
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

/// `cursor` of the audit log: the id of the last entry of the previous page; the page holds the entries
/// older than that one. Any such number is a position; empty, the first page.
pub struct AuditCursor(Option<i64>);

impl<'de> Deserialize<'de> for AuditCursor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() {
            return Ok(AuditCursor(None));
        }
        match text.parse::<i64>() {
            Ok(id) if text.len() <= 18 && text.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(AuditCursor(Some(id)))
            }
            _ => Err(D::Error::custom(
                "the next_cursor of a page: an entry id, 1 to 18 digits",
            )),
        }
    }
}

impl PartialSchema for AuditCursor {
    fn schema() -> RefOr<Schema> {
        let mut cursor = crate::schema::patterned("^[0-9]{0,18}$", 18, "1042", false);
        cursor.description = Some(
            "The next_cursor of the previous page (empty: the first page), the id of its last entry: \
             the page holds the entries older than that one."
                .into(),
        );
        cursor.into()
    }
}

impl ToSchema for AuditCursor {}

/// What an audit entry is about.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResourceType {
    User,
    Role,
    Client,
}

impl ResourceType {
    fn as_str(&self) -> &'static str {
        match self {
            ResourceType::User => "user",
            ResourceType::Role => "role",
            ResourceType::Client => "client",
        }
    }
}

/// The query of the audit log.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditListQuery {
    #[param(inline)]
    limit: Option<Limit>,
    #[param(inline)]
    cursor: Option<AuditCursor>,
    #[param(inline)]
    resource_type: Option<ResourceType>,
    resource_id: Option<String>,
    /// The username of the caller who made the change.
    actor: Option<String>,
}

/// List the audit log
///
/// Newest first. Requires the View Audit Log permission.
#[utoipa::path(get, operation_id = "listAudit", path = "/admin/v1/audit", tag = "audit",
    params(AuditListQuery),
    responses((status = 200, description = "A page of audit entries", body = AuditPage)))]
pub async fn list(
    caller: Caller<ViewAuditLog>,
    state: Data<AdminState>,
    query: Query<AuditListQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.read()?;
    let limit = Limit::of(q.limit);
    let before = q.cursor.and_then(|c| c.0);
    let filter = AuditFilter {
        resource_type: q.resource_type.map(|t| t.as_str().to_string()),
        resource_id: q.resource_id,
        actor: q.actor,
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
            let query = format!(
                "cursor={}",
                url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
            );
            let read = crate::query::read::<AuditListQuery>(&query).is_ok();
            assert_eq!(pattern.is_match(text), read, "{text:?}");
        }
        assert!(pattern.is_match(""), "empty is the first page");
        assert!(crate::query::read::<AuditListQuery>("cursor=").is_ok());
    }
}
