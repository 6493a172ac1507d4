//! Metadata requests committed together (`group_commit`, shards by call): up to `MOST` requests in one
//! transaction, the batch's calls read and locked in one statement, each request applied in the order it
//! came, then one statement per kind of write and the bus messages in one more.
//!
//! Committed one by one, a request was a transaction of eight statements, each a hand-off to SQLite's
//! thread (or a round trip to PostgreSQL), under the database's single write lock: at about 1,200
//! requests/s the machine spent its time handing statements over. A batch pays for that once, and the
//! burst of requests that made it wait is exactly what fills the next batch.
//!
//! A batch is all or nothing: when a statement or the commit fails, every request of it that was to
//! change something gets the error, and nothing of it is written. A request the batch refuses (its call
//! is not there, its folder is being deleted) changes nothing and does not hold up the others.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::request::{Answer, Change, Request};
use super::{metadata_answer, next_last_modified};
use crate::error::AnalyticsError;
use crate::outbox;
use crate::state::AnalyticsState;
use analytics_store::{self as store, CallRow, FieldOf, FieldValue, MetadataChange};
use common::db::Tx;
use scoring::model::{stored_metadata, FolderSettings};

/// Queues the request with the others of its call's shard and waits for its answer.
pub async fn submit(state: Arc<AnalyticsState>, request: Request) -> Answer {
    let batches = state.metadata_batches.clone();
    let call = request.call.clone();
    let commit = move |requests: Vec<Request>| {
        let state = state.clone();
        async move { commit(&state, requests).await }
    };
    batches
        .submit(&call, request, commit)
        .await
        .unwrap_or_else(|| {
            Err(AnalyticsError::internal(
                "the metadata batch ended without an answer",
            ))
        })
}

/// Applies the batch in one transaction: each request's answer, or the batch's error for all.
async fn commit(state: &AnalyticsState, requests: Vec<Request>) -> Vec<Answer> {
    match apply(state, &requests).await {
        Ok(answers) => answers,
        Err(e) => requests.iter().map(|_| Err(e.clone())).collect(),
    }
}

/// A call of the batch as its requests leave it.
struct Working {
    row: CallRow,
    /// The call's whole metadata as its last change left it, written into the stored transcript or
    /// not (`None`: never changed).
    saved: Option<String>,
    /// Whether the call's change needs a message to the metadata worker: none is pending, so none is on
    /// its way; or the pending one has waited so long that its message must have been lost.
    needs_writing: bool,
    /// A reindex message is on its way already.
    reindex_due: bool,
    /// The call's whole metadata as the batch found it, then as its requests leave it; or why it could
    /// not be read. Read before the requests are applied, all calls at once.
    metadata: Option<Result<BTreeMap<String, String>, AnalyticsError>>,
    /// What becomes of the database's rows of fields the batch named: a value, or removed.
    fields: BTreeMap<String, Option<String>>,
    changed: bool,
}

/// The folder of each call, by company, organization and name: its settings, or why it takes no change.
type Folders = HashMap<(String, String, String), Result<FolderSettings, AnalyticsError>>;

/// Applies every request and writes the result; the answers in the order of the requests.
async fn apply(
    state: &AnalyticsState,
    requests: &[Request],
) -> Result<Vec<Answer>, AnalyticsError> {
    let ids: Vec<&str> = requests.iter().map(|r| r.call.as_str()).collect();
    let mut tx = state.db.begin().await?;
    let mut calls: HashMap<String, Working> = store::get_calls_metadata(&mut tx, &ids)
        .await?
        .into_iter()
        .map(|call| {
            let working = Working {
                needs_writing: call.pending.is_none() || overdue(&call.row.last_modified),
                reindex_due: call.reindex_due,
                row: call.row,
                saved: call.metadata,
                metadata: None,
                fields: BTreeMap::new(),
                changed: false,
            };
            (working.row.id.clone(), working)
        })
        .collect();
    // Read after the calls are locked, never before: a deletion marked before this read is seen and
    // refused; one marked after it waits for the calls' locks, so for this transaction, before removing
    // their objects.
    let mut folders = Folders::new();
    for working in calls.values() {
        let key = (
            working.row.company.clone(),
            working.row.organization.clone(),
            working.row.folder.clone(),
        );
        if let std::collections::hash_map::Entry::Vacant(entry) = folders.entry(key) {
            let (company, organization, folder) = entry.key();
            let folder = store::peek_folder(&mut tx, company, organization, folder).await?;
            entry.insert(match folder {
                Some(folder) => folder.usable_settings().map_err(AnalyticsError::from),
                None => Err(AnalyticsError::call_not_found(&working.row.id)),
            });
        }
    }

    // The metadata of every call a request may change: what the row holds, or for a call never changed
    // its stored transcript, read all at once (from S3, one after the other would hold the batch's
    // locks for a round trip each).
    let wanted: HashSet<&str> = requests
        .iter()
        .filter(|r| {
            calls
                .get(&r.call)
                .is_some_and(|w| w.row.company == r.company && w.row.organization == r.organization)
        })
        .map(|r| r.call.as_str())
        .collect();
    let read = wanted.into_iter().map(|id| {
        let working = &calls[id];
        async move {
            let metadata = current(state, &working.row, working.saved.as_deref()).await;
            (id.to_string(), metadata)
        }
    });
    for (id, metadata) in futures_util::future::join_all(read).await {
        if let Some(working) = calls.get_mut(&id) {
            working.metadata = Some(metadata);
        }
    }

    let mut answers = Vec::with_capacity(requests.len());
    for request in requests {
        answers.push(apply_one(&mut calls, &folders, request));
    }

    let changed: Vec<(&Working, &BTreeMap<String, String>)> = calls
        .values()
        .filter(|w| w.changed)
        .filter_map(|w| match &w.metadata {
            Some(Ok(metadata)) => Some((w, metadata)),
            _ => None,
        })
        .collect();
    if !changed.is_empty() {
        write(state, &mut tx, &changed).await?;
        tx.commit().await?;
    }
    Ok(answers)
}

/// Writes what the batch's requests left of their calls, and the messages announcing it.
async fn write(
    state: &AnalyticsState,
    tx: &mut Tx,
    changed: &[(&Working, &BTreeMap<String, String>)],
) -> Result<(), AnalyticsError> {
    let mut set = Vec::new();
    let mut removed = Vec::new();
    let mut whole = Vec::with_capacity(changed.len());
    for (working, metadata) in changed {
        let id = working.row.id.as_str();
        for (field, value) in &working.fields {
            match value {
                Some(value) => set.push(FieldValue {
                    call_id: id,
                    field,
                    value,
                }),
                None => removed.push(FieldOf { call_id: id, field }),
            }
        }
        whole.push(serde_json::to_string(metadata).map_err(AnalyticsError::internal)?);
    }
    // The search document changes only with a field the database holds.
    let lost_a_field = store::remove_metadata_rows(&mut *tx, &removed).await?;
    store::set_metadata_rows(&mut *tx, &set).await?;
    let indexed: Vec<bool> = changed
        .iter()
        .map(|(w, _)| w.fields.values().any(Option::is_some) || lost_a_field.contains(&w.row.id))
        .collect();
    let rows: Vec<MetadataChange> = changed
        .iter()
        .zip(&whole)
        .zip(&indexed)
        .map(|(((w, _), p), indexed)| MetadataChange {
            call_id: &w.row.id,
            last_modified: &w.row.last_modified,
            metadata: p,
            reindex_due: w.reindex_due || *indexed,
        })
        .collect();
    store::set_calls_metadata(&mut *tx, &rows).await?;

    // A message only where none is on its way: the metadata worker writes what is pending when it
    // writes, the newest change included; the reindex worker clears the mark before it reads the call.
    let mut messages = Vec::new();
    for ((working, _), indexed) in changed.iter().zip(indexed) {
        if working.needs_writing {
            messages.push(outbox::write_metadata_message(&working.row));
        }
        if indexed && !working.reindex_due {
            messages.push(outbox::reindex_message(&working.row));
        }
    }
    state
        .bus
        .publish_many(tx, &messages)
        .await
        .map_err(AnalyticsError::internal)
}

/// Applies one request to its call as the batch's earlier requests left it.
fn apply_one(calls: &mut HashMap<String, Working>, folders: &Folders, request: &Request) -> Answer {
    let working = calls
        .get_mut(&request.call)
        .filter(|w| w.row.company == request.company && w.row.organization == request.organization)
        .ok_or_else(|| AnalyticsError::call_not_found(&request.call))?;
    let key = (
        working.row.company.clone(),
        working.row.organization.clone(),
        working.row.folder.clone(),
    );
    let settings = folders
        .get(&key)
        .ok_or_else(|| AnalyticsError::call_not_found(&request.call))?
        .as_ref()
        .map_err(Clone::clone)?;
    let metadata = working
        .metadata
        .as_mut()
        .ok_or_else(|| AnalyticsError::call_not_found(&request.call))?
        .as_mut()
        .map_err(|e| e.clone())?;
    match &request.change {
        Change::Set(fields) => {
            let added = fields
                .keys()
                .filter(|field| !metadata.contains_key(*field))
                .count();
            if metadata.len() + added > scoring::names::MAX_FIELDS {
                return Err(AnalyticsError::BadRequest(format!(
                    "the call would have {} metadata fields; a call keeps at most {}: remove some first",
                    metadata.len() + added,
                    scoring::names::MAX_FIELDS
                )));
            }
            for (field, value) in fields {
                metadata.insert(field.clone(), value.clone());
                if settings.configures(field) {
                    working.fields.insert(field.clone(), Some(value.clone()));
                }
            }
        }
        Change::Remove(names) => {
            for field in names {
                metadata.remove(field);
                working.fields.insert(field.clone(), None);
            }
        }
    }
    working.row.last_modified = next_last_modified(&working.row.last_modified);
    working.changed = true;
    Ok(metadata_answer(&working.row, metadata))
}

/// How long a pending change may wait for the metadata worker before a change of the call announces it
/// again: far longer than the worker takes, shorter than a message's retries last before it is set
/// aside as a dead letter.
const OVERDUE: chrono::Duration = chrono::Duration::seconds(60);

/// Whether a change made at `last_modified` and still pending has waited longer than `OVERDUE`.
fn overdue(last_modified: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(last_modified).map_or(true, |at| {
        chrono::Utc::now() - at.with_timezone(&chrono::Utc) > OVERDUE
    })
}

/// The call's metadata now: as its row holds it since its first change, else as its stored transcript
/// holds it.
async fn current(
    state: &AnalyticsState,
    row: &CallRow,
    saved: Option<&str>,
) -> Result<BTreeMap<String, String>, AnalyticsError> {
    if let Some(saved) = saved {
        return serde_json::from_str(saved).map_err(AnalyticsError::internal);
    }
    let bytes = state
        .objects
        .get(&row.transcript_key())
        .await?
        .ok_or_else(|| AnalyticsError::transcript_missing(&row.id))?;
    stored_metadata(&bytes).map_err(AnalyticsError::internal)
}
