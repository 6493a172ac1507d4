//! Topic `analytics.metadata`: writes calls' pending metadata changes into their stored transcripts. A
//! metadata request commits the call's whole metadata to its row (`metadata_json`, not yet
//! `metadata_written`) with this message and answers; the worker then rewrites the transcript (docs/analytics-api.md, Metadata). A change
//! announces itself only when the call had nothing pending (`crate::metadata`), so a burst of changes
//! to a call is one message, and messages of a batch naming one call are served by one write.
//!
//! The worker writes holding no lock, so metadata requests never wait for an object write (on SQLite
//! nothing waits for one at the database's write lock):
//! - it claims its batch's calls in one short statement: a claim names the worker and lasts `CLAIM`,
//!   and a call another writer holds is left to it (its message is retried);
//! - it reads and rewrites the claimed calls' transcripts, all at once, with no transaction open, then
//!   stores each only if its claim still holds once the reads are done, and only over the very object
//!   it read (`ObjectStore::put_if`);
//! - in one short transaction it marks written each change that is still the call's newest and lets the
//!   calls go. A change committed meanwhile sent no message (its call had one pending), so it stays
//!   pending and the worker announces it in that same transaction: the next batch writes it.
//!
//! Two workers never write one call at once (a redelivered or repeated message finds the claim), and a
//! deletion takes the claims of its calls for good, waiting for a worker's to end, before it removes
//! their objects (`claim_for_deletion`), so nothing is written once they are gone. A worker held up
//! (paused, or waiting on the network) past its claim cannot undo the newer write of the writer that
//! took the call over: if its read came after that write, it finds the claim gone and writes nothing;
//! if before, the object it read is no longer there and its conditional write changes nothing.
//!
//! Under a steady stream of changes the worker pauses between batches (`BATCHING`): every call changed
//! meanwhile is then rewritten once per batch instead of once per change.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;

use common::bus::Delivery;
use messages::v1::WriteMetadata;
use tracing::Instrument;

use crate::outbox;
use crate::state::AnalyticsState;
use crate::worker::{by_call, settle_all, Batching, JobError};
use analytics_store::{self as store, CallMetadata};
use common::objects::Version;
use scoring::model::with_metadata;

/// Up to 100 messages at once, and two seconds for more to gather while the worker keeps up. No reader
/// of the API waits for these writes (requests start from the call's row), and under a steady stream
/// of changes every call changed meanwhile costs one rewrite per pause.
pub(crate) const BATCHING: Batching = Batching {
    most: 100,
    pause: Duration::from_secs(2),
};

/// How long a worker's claim on a call lasts: a worker that stops half way holds its calls this long at
/// most, while their messages are retried (the retries of a message last longer).
pub const CLAIM: Duration = Duration::from_secs(120);

/// No transcript write starts with less than this left of its claim, so every write ends long before
/// another writer can take the call.
const CLAIM_MARGIN: Duration = Duration::from_secs(60);

/// The writer a deletion's claims name.
const DELETION: &str = "deletion";

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

/// Writes the calls' pending metadata into their stored transcripts and clears it; how each call went
/// (a call with nothing to write is not named).
async fn write_all(state: &AnalyticsState, ids: &[&str]) -> HashMap<String, Result<(), JobError>> {
    match Claim::take(state, ids).await {
        Ok(claim) => claim.write(state).await,
        Err(e) => ids
            .iter()
            .map(|id| (id.to_string(), Err(e.clone())))
            .collect(),
    }
}

/// The calls one visit of the worker holds, each as it was when claimed.
pub struct Claim {
    writer: String,
    /// When the claims run out, in milliseconds since the epoch.
    until: i64,
    calls: Vec<CallMetadata>,
    /// Calls with a pending change that another writer holds.
    busy: Vec<String>,
}

impl Claim {
    /// Claims the calls among `ids` that have a pending change and that no other writer holds.
    pub async fn take(state: &AnalyticsState, ids: &[&str]) -> Result<Claim, JobError> {
        let writer = format!("metadata-{}", uuid::Uuid::new_v4().simple());
        let now = now_ms();
        let until = now + CLAIM.as_millis() as i64;
        let mut tx = state.db.begin().await.map_err(JobError::retry)?;
        let calls = store::claim_calls(&mut tx, ids, &writer, now, until, true)
            .await
            .map_err(JobError::retry)?;
        let claimed: HashSet<&str> = calls.iter().map(|c| c.row.id.as_str()).collect();
        let others: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|id| !claimed.contains(id))
            .collect();
        // Of the others, those gone or written already need nothing.
        let busy = if others.is_empty() {
            Vec::new()
        } else {
            store::get_calls_metadata(&mut tx, &others)
                .await
                .map_err(JobError::retry)?
                .into_iter()
                .filter(|c| c.pending.is_some() || c.writer.as_deref() == Some(DELETION))
                .map(|c| c.row.id)
                .collect()
        };
        tx.commit().await.map_err(JobError::retry)?;
        Ok(Claim {
            writer,
            until,
            calls,
            busy,
        })
    }

    /// Writes the claimed calls' transcripts, clears what was written and lets the calls go; how each
    /// call went (a busy one is retried).
    pub async fn write(self, state: &AnalyticsState) -> HashMap<String, Result<(), JobError>> {
        let mut outcomes: HashMap<String, Result<(), JobError>> = self
            .busy
            .iter()
            .map(|id| {
                let busy = JobError::Retry(format!("call {id} is being written by another writer"));
                (id.clone(), Err(busy))
            })
            .collect();
        let rewritten = join_all(self.calls.iter().map(|c| rewrite(state, c, self.until))).await;
        // The claims are looked at once the reads are done, and only when something is to be written.
        let to_store = rewritten.iter().any(|r| matches!(r, Ok(Some(_))));
        let held = if to_store {
            self.still_held(state).await
        } else {
            Ok(HashSet::new())
        };
        let written = match held {
            Ok(held) => {
                join_all(self.calls.iter().zip(rewritten).map(|(call, rewritten)| {
                    let held = held.contains(call.row.id.as_str());
                    store_rewritten(state, call, rewritten, held)
                }))
                .await
            }
            Err(e) => self.calls.iter().map(|_| Err(e.clone())).collect(),
        };
        match self.finish(state, written).await {
            Ok(done) => outcomes.extend(done),
            // Nothing was cleared: the claims run out and the calls' messages are retried.
            Err(e) => outcomes.extend(
                self.calls
                    .iter()
                    .map(|c| (c.row.id.clone(), Err(e.clone()))),
            ),
        }
        outcomes
    }

    /// The claimed calls this visit still holds: another writer takes a call whose claim ran out.
    async fn still_held(&self, state: &AnalyticsState) -> Result<HashSet<String>, JobError> {
        let ids: Vec<&str> = self.calls.iter().map(|c| c.row.id.as_str()).collect();
        Ok(store::get_calls_metadata(&state.db, &ids)
            .await
            .map_err(JobError::retry)?
            .into_iter()
            .filter(|c| c.writer.as_deref() == Some(self.writer.as_str()))
            .map(|c| c.row.id)
            .collect())
    }

    /// Clears the pending changes that were written and are still the calls' newest, announces the
    /// ones that came in meanwhile, and lets every call go, in one transaction; how each call went.
    async fn finish(
        &self,
        state: &AnalyticsState,
        written: Vec<Result<(), JobError>>,
    ) -> Result<HashMap<String, Result<(), JobError>>, JobError> {
        let ids: Vec<&str> = self.calls.iter().map(|c| c.row.id.as_str()).collect();
        let mut tx = state.db.begin().await.map_err(JobError::retry)?;
        let now: HashMap<String, CallMetadata> = store::get_calls_metadata(&mut tx, &ids)
            .await
            .map_err(JobError::retry)?
            .into_iter()
            .map(|c| (c.row.id.clone(), c))
            .collect();
        let mut outcomes = HashMap::new();
        let (mut cleared, mut released, mut gone, mut messages) = (vec![], vec![], vec![], vec![]);
        for (claimed, outcome) in self.calls.iter().zip(written) {
            let id = claimed.row.id.as_str();
            let Some(call) = now.get(id) else {
                // Deleted after the claim ran out: what was written must not stay.
                if outcome.is_ok() {
                    gone.push(claimed.row.transcript_key());
                }
                continue;
            };
            if call.writer.as_deref() != Some(self.writer.as_str()) {
                // The claim ran out and another writer took the call: it writes the newest change.
                tracing::warn!(
                    call = id,
                    "a metadata claim ran out before its write was cleared"
                );
                continue;
            }
            match outcome {
                Ok(()) if call.row.last_modified == claimed.row.last_modified => cleared.push(id),
                Ok(()) => {
                    // Changed while it was written: the newer change is announced now.
                    messages.push(outbox::write_metadata_message(&call.row));
                    released.push(id);
                }
                Err(e) => {
                    outcomes.insert(id.to_string(), Err(e));
                    released.push(id);
                }
            }
        }
        store::release_calls(&mut tx, &self.writer, &cleared, true)
            .await
            .map_err(JobError::retry)?;
        store::release_calls(&mut tx, &self.writer, &released, false)
            .await
            .map_err(JobError::retry)?;
        state
            .bus
            .publish_many(&mut tx, &messages)
            .await
            .map_err(JobError::retry)?;
        tx.commit().await.map_err(JobError::retry)?;
        for key in gone {
            if let Err(e) = state.objects.delete(&key).await {
                tracing::warn!(key, error = %e, "could not remove the transcript of a deleted call");
            }
        }
        Ok(outcomes)
    }
}

/// A transcript read and rewritten with its call's pending change, to be stored over the version read.
struct Rewritten {
    bytes: Vec<u8>,
    version: Version,
}

/// Reads the claimed call's transcript and rewrites it with its pending change, unless too little is
/// left of the claim; None when nothing is pending.
async fn rewrite(
    state: &AnalyticsState,
    call: &CallMetadata,
    until: i64,
) -> Result<Option<Rewritten>, JobError> {
    let Some(pending) = &call.pending else {
        return Ok(None);
    };
    if now_ms() > until - CLAIM_MARGIN.as_millis() as i64 {
        return Err(JobError::Retry(format!(
            "the claim on call {} ran short before its write",
            call.row.id
        )));
    }
    let key = call.row.transcript_key();
    let (stored, version) = state
        .objects
        .get_versioned(&key)
        .await
        .map_err(JobError::retry)?
        .ok_or_else(|| {
            JobError::Retry(format!("the transcript of call {} is missing", call.row.id))
        })?;
    let metadata: BTreeMap<String, String> = serde_json::from_str(pending).map_err(poison)?;
    let bytes = with_metadata(&stored, &metadata, &call.row.last_modified).map_err(poison)?;
    Ok(Some(Rewritten { bytes, version }))
}

/// Stores a rewritten transcript over the version it was read from, if its claim still holds (`held`).
async fn store_rewritten(
    state: &AnalyticsState,
    call: &CallMetadata,
    rewritten: Result<Option<Rewritten>, JobError>,
    held: bool,
) -> Result<(), JobError> {
    let Some(Rewritten { bytes, version }) = rewritten? else {
        return Ok(());
    };
    let id = &call.row.id;
    if !held {
        return Err(JobError::Retry(format!(
            "the claim on call {id} ran out while its transcript was read"
        )));
    }
    let stored = state
        .objects
        .put_if(&call.row.transcript_key(), bytes, &version)
        .await
        .map_err(JobError::retry)?;
    if stored {
        Ok(())
    } else {
        Err(JobError::Retry(format!(
            "the transcript of call {id} changed or went while it was rewritten"
        )))
    }
}

/// Takes the calls' claims for good, for their deletion: waits for a worker's claim to end (at most
/// `CLAIM`), so no transcript write is under way on them, and none starts after.
pub async fn claim_for_deletion(state: &AnalyticsState, ids: &[&str]) -> Result<(), JobError> {
    let deadline = tokio::time::Instant::now() + CLAIM;
    loop {
        let mut tx = state.db.begin().await.map_err(JobError::retry)?;
        store::claim_calls(&mut tx, ids, DELETION, now_ms(), i64::MAX, false)
            .await
            .map_err(JobError::retry)?;
        let held = store::get_calls_metadata(&mut tx, ids)
            .await
            .map_err(JobError::retry)?
            .iter()
            .all(|c| c.writer.as_deref() == Some(DELETION));
        tx.commit().await.map_err(JobError::retry)?;
        if held {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(JobError::Retry(
                "calls to delete are still held by a metadata writer".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Milliseconds since the epoch, as claims count time.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn poison(e: serde_json::Error) -> JobError {
    JobError::Poison(e.to_string())
}
