//! `PATCH` and `DELETE /metadata/<company>/<organization>/<tId>`: a call's metadata (docs/analytics-api.md,
//! Metadata). Every field goes to the transcript JSON in the object store; the fields the folder
//! configures (`custom_meta`) also go to the database and, through a reindex message, to the search index.
//! Every request moves `last_modified` forward; reserved names are refused; the folder's configuration is
//! never changed and no application rescoring is started.
//!
//! A request commits its change and answers: the configured fields' rows, the call's new
//! `last_modified` and its whole metadata as a pending change on the call's row, a message that has the
//! metadata worker (`jobs::metadata`) write it into the stored transcript, and a reindex message when a
//! configured field changed. Rewriting a 55 KB transcript per request would cost far more than the
//! change, and one rewrite serves a burst of changes to a call. The row keeps the whole metadata after
//! the worker has written it too, so the next request starts from the row, never from the transcript
//! (only a call never changed has nothing there). Concurrent requests are committed together, in batches
//! (`batch`).
//!
//! Concurrent requests on one call never lose an update: a batch applies its requests in the order they
//! came, each starting from what the one before left, in one transaction that first locks the batch's
//! calls (SQLite's write lock, PostgreSQL's row locks, taken in the order of the calls' ids), so batches
//! of several processes on one call take turns too. The folders are read without locking them, after
//! the calls are locked: locking them would make every request of a folder wait for the one before it.
//! A deletion that starts after the read waits for the calls' rows before it goes on (`jobs::delete`); a configuration change committed meanwhile is as if it had come after the request,
//! since it copies no metadata.

pub mod schema;

use std::collections::BTreeMap;

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use serde_json::{Map, Value};

use super::body::{json_body, Body};
use crate::access::{Authorized, Write};
use crate::error::AnalyticsError;
use crate::metadata::batch;
use crate::metadata::request::{Change, Request};
use crate::routes::paths::CallPath;
use crate::state::AnalyticsState;
use scoring::model::metadata_value;
use scoring::names::{
    check_field, check_field_count, check_removable_field, CallId, CompanyName, OrgName,
};

type Answer = Result<HttpResponse, AnalyticsError>;

/// Set or replace metadata fields
///
/// The body is a JSON object of field names and values (strings, numbers or booleans, kept as text).
/// The answer is the call's whole metadata after the change.
#[utoipa::path(patch, path = "/metadata/{company}/{organization}/{tId}", tag = "metadata",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path)),
    request_body(content = schema::MetadataSet, description = "Field names and values"),
    responses((status = 200, description = "The call's metadata", body = Object),
        (status = 400, description = "A reserved or invalid field (text/html)")))]
pub async fn patch(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<CallPath>,
    body: Body,
) -> Answer {
    let CallPath {
        company,
        organization,
        call,
    } = path.into_inner();
    let fields: Map<String, Value> = json_body(&body, None)?;
    check_field_count(fields.len(), "the request sets")?;
    let mut set = BTreeMap::new();
    for (field, value) in &fields {
        check_field(field)?;
        set.insert(field.clone(), metadata_value(field, value)?);
    }
    commit(state, company, organization, call, Change::Set(set)).await
}

/// Remove metadata fields
///
/// The body is a JSON array of field names; names the call does not have are ignored. The answer is the
/// call's whole metadata after the change.
#[utoipa::path(delete, path = "/metadata/{company}/{organization}/{tId}", tag = "metadata",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path)),
    request_body(content = schema::MetadataRemove, description = "Field names"),
    responses((status = 200, description = "The call's metadata", body = Object),
        (status = 400, description = "A reserved or invalid field (text/html)")))]
pub async fn delete(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<CallPath>,
    body: Body,
) -> Answer {
    let CallPath {
        company,
        organization,
        call,
    } = path.into_inner();
    let names: Vec<String> = json_body(&body, None)?;
    check_field_count(names.len(), "the request names")?;
    for field in &names {
        check_removable_field(field)?;
    }
    commit(state, company, organization, call, Change::Remove(names)).await
}

/// Commits the change with whatever other requests are waiting, and answers the call's metadata.
async fn commit(
    state: Data<AnalyticsState>,
    company: CompanyName,
    organization: OrgName,
    call: CallId,
    change: Change,
) -> Answer {
    let request = Request {
        company: company.into(),
        organization: organization.into(),
        call: call.into(),
        change,
    };
    let metadata = batch::submit(state.into_inner(), request).await?;
    Ok(HttpResponse::Ok().json(metadata))
}
