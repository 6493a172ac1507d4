//! Topic `analytics.reindex`: brings calls' search documents up to date with what is stored. The worker
//! reads each call as it is now (row, configured metadata, transcript text), so messages may arrive late,
//! twice or out of order: the last one processed always writes the current state. A call that is gone,
//! or whose folder is being deleted, has its document removed. Messages are taken in batches of up to
//! `BATCH`, whose documents are written to the index in one write (an index commit is the costly part),
//! and acknowledged after it.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::bus::Delivery;
use common::search::SearchDocument;
use messages::v1::ReindexCall;
use serde_json::{Map, Value};
use tracing::Instrument;

use super::{by_call, settle, settle_together, Batching, JobError};
use crate::model::{stored_text, text_of};
use crate::state::AnalyticsState;
use crate::store::{self, STATUS_OK};

/// Up to 100 messages per index write, and a second for more to gather while the worker keeps up: a
/// change is searchable within about that long under a steady stream of changes, at one index write
/// per call and pause.
pub(crate) const BATCHING: Batching = Batching {
    most: 100,
    pause: std::time::Duration::from_secs(1),
};

/// What a call's document needs.
pub enum Action {
    Upsert(Box<SearchDocument>),
    Remove(String),
}

/// Brings the documents of a batch of messages up to date in one index write, then settles each message.
/// A call named by several messages of the batch is read once: each reads the call as it is now anyway.
pub async fn process(state: Arc<AnalyticsState>, batch: Vec<Delivery>) {
    let state = &state;
    let calls = by_call(state, messages::topics::REINDEX, batch, |body| {
        <ReindexCall as messages::Message>::decode(body).map(|m| m.call_id)
    })
    .await;
    let ids: Vec<&str> = calls.keys().map(String::as_str).collect();
    let cleared = async {
        let _turn = state.db.write_turn().await?;
        store::clear_reindex_due(&state.db, &ids).await
    };
    if let Err(e) = cleared.await {
        // Nothing read yet: every message is retried.
        let deliveries = calls.into_values().flatten().collect();
        settle_together(state, messages::topics::REINDEX, deliveries, &Err(e)).await;
        return;
    }
    let mut ready = Vec::new();
    let mut upserts = Vec::new();
    let mut removals = Vec::new();
    for (call_id, deliveries) in calls {
        let span = common::telemetry::job_span(
            messages::topics::REINDEX,
            deliveries[0].message.traceparent.as_deref(),
        );
        match action(state, call_id).instrument(span).await {
            Ok(Action::Upsert(document)) => {
                upserts.push(*document);
                ready.extend(deliveries);
            }
            Ok(Action::Remove(id)) => {
                removals.push(id);
                ready.extend(deliveries);
            }
            Err(e) => {
                // Retried, or dead letters when the call's transcript can never be read.
                for delivery in deliveries {
                    settle(state, messages::topics::REINDEX, delivery, Err(e.clone())).await;
                }
            }
        }
    }
    let written = async {
        if !upserts.is_empty() {
            state.search.upsert(&upserts).await?;
        }
        if !removals.is_empty() {
            state.search.delete(&removals).await?;
        }
        Ok::<(), common::search::SearchError>(())
    }
    .await
    .map_err(JobError::retry);
    settle_together(state, messages::topics::REINDEX, ready, &written).await;
}

/// What the call's document needs, read from the stores.
pub async fn action(state: &AnalyticsState, call_id: String) -> Result<Action, JobError> {
    let row = store::get_call(&state.db, &call_id)
        .await
        .map_err(JobError::retry)?;
    let Some(row) = row else {
        return Ok(Action::Remove(call_id));
    };
    let folder = store::get_folder(&state.db, &row.company, &row.organization, &row.folder)
        .await
        .map_err(JobError::retry)?;
    if folder.is_none_or(|f| f.status != STATUS_OK) {
        return Ok(Action::Remove(call_id));
    }
    let transcript = state
        .objects
        .get(&row.transcript_key())
        .await
        .map_err(JobError::retry)?
        .ok_or_else(|| JobError::Retry(format!("the transcript of call {call_id} is missing")))?;
    // The whole tree only for a transcript whose text the typed reading does not take (a value of
    // another type where a text was expected, which `text_of` skips).
    let text = match stored_text(&transcript) {
        Ok(text) => text,
        Err(_) => {
            let json: Map<String, Value> =
                serde_json::from_slice(&transcript).map_err(|e| JobError::Poison(e.to_string()))?;
            text_of(&json)
        }
    };
    let fields: BTreeMap<String, String> = store::metadata(&state.db, &call_id)
        .await
        .map_err(JobError::retry)?
        .into_iter()
        .collect();
    Ok(Action::Upsert(Box::new(SearchDocument {
        id: row.id,
        company: row.company,
        organization: row.organization,
        folder: row.folder,
        datetime: row.datetime,
        text,
        fields,
    })))
}
