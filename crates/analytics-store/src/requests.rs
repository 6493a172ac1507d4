//! Transcription requests (docs/transcription.md, Progress): accepted, transcribed, and their callback
//! delivered or given up. Like every store function these run on the pool or inside the caller's
//! transaction, so a request, its job message and later its result and callback message commit together.

use common::db::{Handle, StoreError};
use common::dispatch;

use super::rows::{Outcome, RequestKeys, RequestRow};
use super::sql::Statements;

/// The states of a request.
pub const QUEUED: &str = "queued";
pub const TRANSCRIBING: &str = "transcribing";
pub const DONE: &str = "done";
pub const FAILED: &str = "failed";

/// The states of its callback.
pub const CALLBACK_NONE: &str = "none";
pub const CALLBACK_PENDING: &str = "pending";
pub const CALLBACK_DELIVERED: &str = "delivered";
pub const CALLBACK_CANCELLED: &str = "cancelled";

pub async fn insert_request<'a>(
    h: impl Into<Handle<'a>>,
    row: &RequestRow,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_request(row))
}

/// The company's latest `limit` requests, newest first.
pub async fn recent_requests<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    limit: i64,
) -> Result<Vec<RequestRow>, StoreError> {
    dispatch!(h, Statements::recent_requests(company, limit))
}

/// The request of `id`; inside a transaction, locked until it ends.
pub async fn get_request<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
) -> Result<Option<RequestRow>, StoreError> {
    dispatch!(h, Statements::get_request(id))
}

/// Marks a queued request as being transcribed and counts the start: how many times it has been started
/// (more than once when a job is retried, or came back after its worker died); `None` when it has ended.
pub async fn start_request<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
    updated: &str,
) -> Result<Option<i64>, StoreError> {
    dispatch!(h, Statements::start_request(id, updated))
}

/// Records how the request ended; only a request not ended yet changes (whether it did).
pub async fn finish_request<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
    outcome: &Outcome<'_>,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::finish_request(id, outcome))
}

/// Records a callback attempt: how many so far, the state it leaves and the last error.
pub async fn record_callback<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
    attempts: i64,
    state: &str,
    error: &str,
    updated: &str,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::record_callback(id, attempts, state, error, updated)
    )
}

/// Removes the requests of a company, organization or folder (with `""` for all), at most `limit` at
/// once; their object keys, for the caller to remove first.
pub async fn request_keys<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
    limit: i64,
) -> Result<Vec<RequestKeys>, StoreError> {
    dispatch!(
        h,
        Statements::request_keys(company, organization, folder, limit)
    )
}

pub async fn delete_requests<'a>(
    h: impl Into<Handle<'a>>,
    ids: &[String],
) -> Result<(), StoreError> {
    dispatch!(h, Statements::delete_requests(ids))
}

/// The ids among `ids` that a request holds, as its own id or as the id of the call it becomes: the
/// owners of objects under `<company>/_requests/<id>/` and of audio under a call's prefix.
pub async fn held_by_requests<'a>(
    h: impl Into<Handle<'a>>,
    ids: &[&str],
) -> Result<Vec<String>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(h, Statements::held_by_requests(ids))
}
