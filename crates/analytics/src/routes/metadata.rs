//! `PATCH` and `DELETE /metadata/<company>/<organization>/<tId>`: a call's metadata (docs/analytics-api.md,
//! Metadata). Every field goes to the transcript JSON in the object store; the fields the folder
//! configures (`custom_meta`) also go to the database and, through a reindex message, to the search index.
//! Every request moves `last_modified` forward; reserved names are refused; the folder's configuration is
//! never changed and no application rescoring is started.
//!
//! A request commits the change in one transaction and answers: the configured fields' rows, the call's
//! new `last_modified` and its whole metadata as a pending change on the call's row, a message that has
//! the metadata worker (`jobs::metadata`) write it into the stored transcript, and a reindex message when
//! a configured field changed. Rewriting a 55 KB transcript per request would cost far more than the
//! change, and one rewrite serves a burst of changes to a call. Until the worker has run, the pending
//! change is the call's metadata: the next request starts from it.
//!
//! Concurrent requests on one call never lose an update: each runs in one transaction that first locks the
//! call's row (SQLite's write lock, PostgreSQL's row lock), so requests on the same call take turns, each
//! starting from the metadata the previous one left. The folder is read without locking it, after the
//! call is locked: locking it would make every request of the folder wait for the one before it. A
//! deletion that starts after the read waits for the call's row before removing the call's objects
//! (`jobs::delete`); a configuration change committed meanwhile is as if it had come after the request,
//! since it copies no metadata.

use std::collections::BTreeMap;

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Map, Value};

use super::json_body;
use crate::access::{authorize_request, Need};
use crate::error::AnalyticsError;
use crate::jobs::announce;
use crate::model::{metadata_value, stored_metadata};
use crate::names::check_field;
use crate::state::AnalyticsState;
use crate::store::{self, CallRow};

type Answer = Result<HttpResponse, AnalyticsError>;

/// What a request does to the metadata.
enum Change {
    Set(BTreeMap<String, String>),
    Remove(Vec<String>),
}

/// Set or replace metadata fields
///
/// The body is a JSON object of field names and values (strings, numbers or booleans, kept as text).
/// The answer is the call's whole metadata after the change.
#[utoipa::path(patch, path = "/metadata/{company}/{organization}/{tId}", tag = "metadata",
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path),
        ("token" = String, Query, description = "Access token (analytics:write)")),
    request_body(content = Object, description = "Field names and values"),
    responses((status = 200, description = "The call's metadata", body = Object),
        (status = 400, description = "A reserved or invalid field (text/html)")))]
pub async fn patch(
    state: Data<AnalyticsState>,
    req: HttpRequest,
    path: Path<(String, String, String)>,
    body: Bytes,
) -> Answer {
    let (company, organization, call) = path.into_inner();
    authorize_request(&state, &req, &company, Need::Write).await?;
    let fields: Map<String, Value> = json_body(&body, None)?;
    let mut set = BTreeMap::new();
    for (field, value) in &fields {
        check_field(field)?;
        set.insert(field.clone(), metadata_value(field, value)?);
    }
    change(&state, &company, &organization, &call, Change::Set(set)).await
}

/// Remove metadata fields
///
/// The body is a JSON array of field names; names the call does not have are ignored. The answer is the
/// call's whole metadata after the change.
#[utoipa::path(delete, path = "/metadata/{company}/{organization}/{tId}", tag = "metadata",
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path),
        ("token" = String, Query, description = "Access token (analytics:write)")),
    request_body(content = Vec<String>, description = "Field names"),
    responses((status = 200, description = "The call's metadata", body = Object),
        (status = 400, description = "A reserved or invalid field (text/html)")))]
pub async fn delete(
    state: Data<AnalyticsState>,
    req: HttpRequest,
    path: Path<(String, String, String)>,
    body: Bytes,
) -> Answer {
    let (company, organization, call) = path.into_inner();
    authorize_request(&state, &req, &company, Need::Write).await?;
    let names: Vec<String> = json_body(&body, None)?;
    for field in &names {
        check_field(field)?;
    }
    change(
        &state,
        &company,
        &organization,
        &call,
        Change::Remove(names),
    )
    .await
}

/// The next `last_modified`: now, or a millisecond after the previous one if the clock has not moved on.
pub fn next_last_modified(previous: &str) -> String {
    let now = Utc::now();
    let next = match DateTime::parse_from_rfc3339(previous) {
        Ok(prev) if prev.with_timezone(&Utc) >= now => {
            prev.with_timezone(&Utc) + Duration::milliseconds(1)
        }
        _ => now,
    };
    next.to_rfc3339_opts(SecondsFormat::Millis, true)
}

async fn change(
    state: &AnalyticsState,
    company: &str,
    organization: &str,
    call: &str,
    change: Change,
) -> Answer {
    let mut tx = state.db.begin().await?;
    let (row, pending) = store::get_call_metadata(&mut tx, call)
        .await?
        .filter(|(r, _)| r.company == company && r.organization == organization)
        .ok_or_else(|| AnalyticsError::call_not_found(call))?;
    // Read after the call is locked, never before: a deletion marked before this read is seen and refused;
    // one marked after it waits for the call's lock, so for this transaction, before removing its objects.
    let folder = store::peek_folder(&mut tx, company, organization, &row.folder)
        .await?
        .ok_or_else(|| AnalyticsError::call_not_found(call))?;
    let settings = folder.usable_settings()?;

    // The call's metadata now: a change still pending, else what its stored transcript holds.
    let mut metadata: BTreeMap<String, String> = match &pending {
        Some(pending) => serde_json::from_str(pending).map_err(AnalyticsError::internal)?,
        None => {
            let bytes = state
                .objects
                .get(&row.transcript_key())
                .await?
                .ok_or_else(|| {
                    AnalyticsError::internal(format!("the transcript of call {call} is missing"))
                })?;
            stored_metadata(&bytes).map_err(AnalyticsError::internal)?
        }
    };

    // The search document changes only with a field the database holds.
    let mut indexed = false;
    match &change {
        Change::Set(fields) => {
            for (field, value) in fields {
                metadata.insert(field.clone(), value.clone());
                if settings.configures(field) {
                    store::set_metadata(&mut tx, call, field, value).await?;
                    indexed = true;
                }
            }
        }
        Change::Remove(names) => {
            for field in names {
                metadata.remove(field);
                indexed |= store::remove_metadata(&mut tx, call, field).await?;
            }
        }
    }
    let last_modified = next_last_modified(&row.last_modified);
    let pending = serde_json::to_string(&metadata).map_err(AnalyticsError::internal)?;
    store::set_call_metadata(&mut tx, call, &last_modified, Some(&pending)).await?;
    announce::write_metadata(state, &mut tx, &row).await?;
    if indexed {
        announce::reindex_call(state, &mut tx, &row).await?;
    }
    tx.commit().await?;

    let row = CallRow {
        last_modified,
        ..row
    };
    Ok(HttpResponse::Ok().json(metadata_answer(&row, &metadata)))
}

/// The call's metadata as the API answers it: the transcript's own fields, then every metadata field.
pub fn metadata_answer(row: &CallRow, metadata: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut answer = Map::new();
    answer.insert("tId".into(), Value::String(row.id.clone()));
    answer.insert("datetime".into(), Value::String(row.datetime.clone()));
    answer.insert(
        "last_modified".into(),
        Value::String(row.last_modified.clone()),
    );
    answer.insert("filename".into(), Value::String(row.filename.clone()));
    answer.insert("agent_id".into(), Value::String(row.agent_id.clone()));
    for (field, value) in metadata {
        answer.insert(field.clone(), Value::String(value.clone()));
    }
    answer
}
