//! Topic `analytics.metadata`: writes calls' pending metadata changes into their stored transcripts. A
//! metadata request commits the call's whole metadata to its row (`pending_metadata`) with this message
//! and answers; the worker then rewrites the transcript (docs/analytics-api.md, Metadata). Messages of a
//! batch naming one call are served by one write of what is pending then, so a burst of changes to a
//! call costs one rewrite.
//!
//! The transcript is read and rewritten outside any transaction; the write itself happens with the call's
//! row locked and only if the row still holds what was read. A change committed in between has its own
//! message, outside this batch, which writes it later; a deletion waits for the lock before removing the
//! call's objects, so nothing is written after they are gone.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::bus::Delivery;
use messages::v1::WriteMetadata;
use tracing::Instrument;

use super::{by_call, settle_all, JobError};
use crate::model::with_metadata;
use crate::state::AnalyticsState;
use crate::store;

/// Messages taken at once.
pub const BATCH: usize = 100;

/// Writes the pending metadata of the batch's calls, one write per call, then settles the messages.
pub async fn process(state: Arc<AnalyticsState>, batch: Vec<Delivery>) {
    let state = &state;
    let calls = by_call(state, messages::topics::METADATA, batch, |body| {
        <WriteMetadata as messages::Message>::decode(body).map(|m| m.call_id)
    })
    .await;
    let mut settled = Vec::new();
    for (call_id, deliveries) in calls {
        let span = common::telemetry::job_span(
            messages::topics::METADATA,
            deliveries[0].message.traceparent.as_deref(),
        );
        let outcome = write(state, &call_id).instrument(span).await;
        // Each message of the call settles as the write went: retried, or a dead letter when its
        // pending change can never be written.
        settled.extend(deliveries.into_iter().map(|d| (d, outcome.clone())));
    }
    settle_all(state, messages::topics::METADATA, settled).await;
}

/// Writes the call's pending metadata, if any, into its stored transcript and clears it.
pub async fn write(state: &AnalyticsState, call_id: &str) -> Result<(), JobError> {
    let Some((row, Some(pending))) = store::get_call_metadata(&state.db, call_id)
        .await
        .map_err(JobError::retry)?
    else {
        // Gone, or written already (by an earlier message of the same change).
        return Ok(());
    };
    let metadata: BTreeMap<String, String> =
        serde_json::from_str(&pending).map_err(|e| JobError::Poison(e.to_string()))?;
    let key = row.transcript_key();
    let stored = state
        .objects
        .get(&key)
        .await
        .map_err(JobError::retry)?
        .ok_or_else(|| JobError::Retry(format!("the transcript of call {call_id} is missing")))?;
    let written = with_metadata(&stored, &metadata, &row.last_modified)
        .map_err(|e| JobError::Poison(e.to_string()))?;

    let mut tx = state.db.begin().await.map_err(JobError::retry)?;
    let now = store::get_call_metadata(&mut tx, call_id)
        .await
        .map_err(JobError::retry)?;
    let unchanged = now.as_ref().is_some_and(|(r, p)| {
        r.last_modified == row.last_modified && p.as_deref() == Some(pending.as_str())
    });
    if !unchanged {
        // Gone, or changed again: the later change's own message writes what it left.
        return Ok(());
    }
    state
        .objects
        .put(&key, written)
        .await
        .map_err(JobError::retry)?;
    store::set_call_metadata(&mut tx, call_id, &row.last_modified, None)
        .await
        .map_err(JobError::retry)?;
    tx.commit().await.map_err(JobError::retry)?;
    Ok(())
}
