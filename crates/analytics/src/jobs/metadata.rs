//! Topic `analytics.metadata`: writes calls' pending metadata changes into their stored transcripts. A
//! metadata request commits the call's whole metadata to its row (`pending_metadata`) with this message
//! and answers; the worker then rewrites the transcript (docs/analytics-api.md, Metadata). Messages of a
//! batch naming one call are served by one write of what is pending then, so a burst of changes to a
//! call costs one rewrite.
//!
//! A change announces itself only when the call had nothing pending (`routes::metadata`), so a burst of
//! changes to a call is one message. The batch's transcripts are read and rewritten outside any
//! transaction, all at once; the writes themselves happen in one transaction that holds the batch's
//! calls locked, all at once too (on SQLite a transaction per call held the database's write lock for
//! an object write each, while every metadata request waited). When a change was committed in between,
//! the newest one is written instead, with the transcript already read: a call changed without pause
//! is still written on every visit, and since that change sent no message of its own, nothing else
//! would write it. A deletion waits for the locks before removing the calls' objects, so nothing is
//! written after they are gone.
//!
//! Under a steady stream of changes the worker pauses between batches (`BATCHING`): every call changed
//! meanwhile is then rewritten once per batch instead of once per change.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures_util::future::join_all;

use common::bus::Delivery;
use messages::v1::WriteMetadata;
use tracing::Instrument;

use super::{by_call, settle_all, Batching, JobError};
use crate::model::StoredTranscript;
use crate::state::AnalyticsState;
use crate::store::{self, CallRow};

/// Up to 100 messages at once, and half a second for more to gather while the worker keeps up.
pub(crate) const BATCHING: Batching = Batching {
    most: 100,
    pause: std::time::Duration::from_millis(500),
};

/// Writes the pending metadata of the batch's calls, one write per call, then settles the messages.
pub async fn process(state: Arc<AnalyticsState>, batch: Vec<Delivery>) {
    let state = &state;
    let calls = by_call(state, messages::topics::METADATA, batch, |body| {
        <WriteMetadata as messages::Message>::decode(body).map(|m| m.call_id)
    })
    .await;
    // The batch's work joins the trace of its first message.
    let traceparent = calls
        .values()
        .next()
        .and_then(|deliveries| deliveries[0].message.traceparent.as_deref());
    let span = common::telemetry::job_span(messages::topics::METADATA, traceparent);
    let ids: Vec<&str> = calls.keys().map(String::as_str).collect();
    let outcomes = write_all(state, &ids).instrument(span).await;
    // Each message of a call settles as its write went: retried, or a dead letter when its pending
    // change can never be written.
    let mut settled = Vec::new();
    for (call_id, deliveries) in calls {
        let outcome = outcomes.get(&call_id).cloned().unwrap_or(Ok(()));
        settled.extend(deliveries.into_iter().map(|d| (d, outcome.clone())));
    }
    settle_all(state, messages::topics::METADATA, settled).await;
}

/// Writes the call's pending metadata, if any, into its stored transcript and clears it.
pub async fn write(state: &AnalyticsState, call_id: &str) -> Result<(), JobError> {
    write_all(state, &[call_id])
        .await
        .remove(call_id)
        .unwrap_or(Ok(()))
}

/// A call's change rewritten into its transcript, ready to be stored.
struct Prepared {
    row: CallRow,
    pending: String,
    transcript: StoredTranscript,
    written: Vec<u8>,
}

/// Writes the calls' pending metadata into their stored transcripts and clears it; how each call went
/// (a call with nothing to write is not named).
async fn write_all(state: &AnalyticsState, ids: &[&str]) -> HashMap<String, Result<(), JobError>> {
    let mut outcomes = HashMap::new();
    let mut prepared = HashMap::new();
    for (id, result) in join_all(ids.iter().map(|id| prepare(state, id))).await {
        match result {
            Ok(Some(ready)) => {
                prepared.insert(id, ready);
            }
            Ok(None) => {}
            Err(e) => {
                outcomes.insert(id, Err(e));
            }
        }
    }
    if prepared.is_empty() {
        return outcomes;
    }
    let failed = match store_all(state, prepared, &mut outcomes).await {
        Ok(()) => return outcomes,
        Err(e) => e,
    };
    // Nothing was cleared: every call without an error of its own is tried again.
    for id in ids {
        outcomes
            .entry(id.to_string())
            .or_insert_with(|| Err(failed.clone()));
    }
    outcomes
}

/// The call with its change rewritten into its transcript, read and computed outside any transaction;
/// `None` when nothing is pending (or the call is gone).
async fn prepare(state: &AnalyticsState, id: &str) -> (String, Result<Option<Prepared>, JobError>) {
    let prepared = async {
        let Some((row, Some(pending))) = store::get_call_metadata(&state.db, id)
            .await
            .map_err(JobError::retry)?
        else {
            // Gone, or written already (by an earlier message of the same change).
            return Ok(None);
        };
        let stored = state
            .objects
            .get(&row.transcript_key())
            .await
            .map_err(JobError::retry)?
            .ok_or_else(|| JobError::Retry(format!("the transcript of call {id} is missing")))?;
        let mut transcript = StoredTranscript::parse(&stored).map_err(poison)?;
        let written = transcript
            .with_metadata(&parsed(&pending)?, &row.last_modified)
            .map_err(poison)?;
        Ok(Some(Prepared {
            row,
            pending,
            transcript,
            written,
        }))
    };
    (id.to_string(), prepared.await)
}

/// Stores the prepared transcripts with their calls locked, and clears what each wrote; a call whose
/// object could not be stored keeps its change pending and gets its error in `outcomes`.
async fn store_all(
    state: &AnalyticsState,
    mut prepared: HashMap<String, Prepared>,
    outcomes: &mut HashMap<String, Result<(), JobError>>,
) -> Result<(), JobError> {
    let ids: Vec<&str> = prepared.keys().map(String::as_str).collect();
    let mut tx = state.db.begin().await.map_err(JobError::retry)?;
    let now = store::get_calls_metadata(&mut tx, &ids)
        .await
        .map_err(JobError::retry)?;
    let mut writes = Vec::new();
    for call in now {
        let Some(ready) = prepared.remove(&call.row.id) else {
            continue;
        };
        let written = match &call.pending {
            Some(p) if call.row.last_modified == ready.row.last_modified && *p == ready.pending => {
                ready.written
            }
            // Changed again since it was read: the newest change is written instead.
            Some(p) => {
                let mut transcript = ready.transcript;
                match parsed(p).and_then(|m| {
                    transcript
                        .with_metadata(&m, &call.row.last_modified)
                        .map_err(poison)
                }) {
                    Ok(written) => written,
                    Err(e) => {
                        outcomes.insert(call.row.id.clone(), Err(e));
                        continue;
                    }
                }
            }
            // Written already (by another worker).
            None => continue,
        };
        writes.push((call, written));
    }
    // Calls not found any more are gone: nothing to write.
    let (calls, contents): (Vec<_>, Vec<_>) = writes.into_iter().unzip();
    let keys: Vec<String> = calls.iter().map(|c| c.row.transcript_key()).collect();
    let stored = join_all(
        contents
            .into_iter()
            .zip(&keys)
            .map(|(written, key)| state.objects.put(key, written)),
    )
    .await;
    let mut cleared = Vec::new();
    for (call, result) in calls.iter().zip(stored) {
        match result {
            Ok(()) => cleared.push((
                call.row.id.as_str(),
                call.row.last_modified.as_str(),
                None,
                call.reindex_due,
            )),
            Err(e) => {
                outcomes.insert(call.row.id.clone(), Err(JobError::retry(e)));
            }
        }
    }
    store::set_calls_metadata(&mut tx, &cleared)
        .await
        .map_err(JobError::retry)?;
    tx.commit().await.map_err(JobError::retry)?;
    Ok(())
}

/// A pending change as the metadata it holds.
fn parsed(pending: &str) -> Result<BTreeMap<String, String>, JobError> {
    serde_json::from_str(pending).map_err(poison)
}

fn poison(e: serde_json::Error) -> JobError {
    JobError::Poison(e.to_string())
}
