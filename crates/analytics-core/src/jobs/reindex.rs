//! Topic `analytics.reindex`: brings calls' search documents up to date with what is stored. The worker
//! reads each call as it is now (row, configured metadata, transcript text), so messages may arrive late,
//! twice or out of order: the last one processed always writes the current state. A call that is gone,
//! or whose folder is being deleted, has its document removed. Messages are taken in batches of up to
//! `BATCH`, whose documents are written to the index in one write (an index commit is the costly part),
//! and acknowledged after it. A document the index refuses fails only the messages of its own call
//! (`SearchIndex::upsert_each`), which become dead letters; the rest of the batch is written.

use std::collections::{btree_map, BTreeMap};
use std::sync::Arc;

use common::bus::Delivery;
use common::search::SearchDocument;
use messages::v1::ReindexCall;
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::state::AnalyticsState;
use crate::worker::{
    by_call, outcomes_by_call, settle, settle_all, settle_together, Batching, JobError,
};
use analytics_store::{self as store, FolderKey, STATUS_OK};
use scoring::model::{stored_text, text_of};

/// Up to 500 messages per index write, and a second for more to gather while the worker keeps up: a
/// change is searchable within about that long under a steady stream of changes, at one index write
/// per call and pause. Behind a stream of uploads, batches of 100 were nine index commits a second,
/// each a new segment for the index to merge again; of 500, about two (docs/benchmarks.md).
pub(crate) const BATCHING: Batching = Batching {
    most: 500,
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
    let traced: Vec<(&str, Option<&str>)> = calls
        .iter()
        .map(|(id, deliveries)| (id.as_str(), deliveries[0].message.traceparent.as_deref()))
        .collect();
    let mut actions = match actions(state, &traced).await {
        Ok(actions) => actions,
        Err(e) => {
            let deliveries = calls.into_values().flatten().collect();
            settle_together(state, messages::topics::REINDEX, deliveries, &Err(e)).await;
            return;
        }
    };
    let mut upserted = BTreeMap::new();
    let mut upserts = Vec::new();
    let mut removed = Vec::new();
    let mut removals = Vec::new();
    for (call_id, deliveries) in calls {
        let action = actions
            .remove(&call_id)
            .unwrap_or_else(|| Err(JobError::Retry(format!("call {call_id} was not read"))));
        match action {
            Ok(Action::Upsert(document)) => {
                upserts.push(*document);
                upserted.insert(call_id, deliveries);
            }
            Ok(Action::Remove(id)) => {
                removals.push(id);
                removed.extend(deliveries);
            }
            Err(e) => {
                // Retried, or dead letters when the call's transcript can never be read.
                for delivery in deliveries {
                    settle(state, messages::topics::REINDEX, delivery, Err(e.clone())).await;
                }
            }
        }
    }
    // A document the index refuses fails its own messages only: they become dead letters, to be
    // replayed once what made the index refuse it is mended.
    let mut settled = match state.search.upsert_each(&upserts).await {
        Ok(refused) => outcomes_by_call(
            upserted,
            refused
                .into_iter()
                .map(|r| (r.id, JobError::Poison(r.reason))),
        ),
        Err(e) => {
            let failed = JobError::retry(e);
            let all = upserted.into_values().flatten();
            all.map(|d| (d, Err(failed.clone()))).collect()
        }
    };
    let deleted = if removals.is_empty() {
        Ok(())
    } else {
        state
            .search
            .delete(&removals)
            .await
            .map_err(JobError::retry)
    };
    settled.extend(removed.into_iter().map(|d| (d, deleted.clone())));
    settle_all(state, messages::topics::REINDEX, settled).await;
}

/// What the documents of the calls need, each call with the trace context of a message naming it, read
/// from the stores: the rows, the folders and the configured fields in one statement each, the
/// transcripts all at once. An error of a statement is the whole batch's; one of a transcript its call's.
pub async fn actions(
    state: &AnalyticsState,
    calls: &[(&str, Option<&str>)],
) -> Result<BTreeMap<String, Result<Action, JobError>>, JobError> {
    let ids: Vec<&str> = calls.iter().map(|(id, _)| *id).collect();
    let traces: BTreeMap<&str, Option<&str>> = calls.iter().copied().collect();
    let rows = store::get_calls(&state.db, &ids)
        .await
        .map_err(JobError::retry)?;
    // Whether each folder of the calls is usable (there, and not being deleted), read once per folder.
    let mut usable: BTreeMap<FolderKey, bool> = BTreeMap::new();
    for row in &rows {
        let key = row.folder_key();
        if let btree_map::Entry::Vacant(entry) = usable.entry(key) {
            let folder = store::peek_folder(&state.db, key.company, key.organization, key.folder)
                .await
                .map_err(JobError::retry)?;
            entry.insert(folder.is_some_and(|f| f.status == STATUS_OK));
        }
    }
    let keep: Vec<bool> = rows.iter().map(|row| usable[&row.folder_key()]).collect();
    let kept: Vec<_> = rows
        .into_iter()
        .zip(keep)
        .filter_map(|(row, ok)| ok.then_some(row))
        .collect();
    let kept_ids: Vec<&str> = kept.iter().map(|row| row.id.as_str()).collect();
    let mut fields: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for f in store::calls_metadata(&state.db, &kept_ids)
        .await
        .map_err(JobError::retry)?
    {
        fields
            .entry(f.call_id)
            .or_default()
            .insert(f.field, f.value);
    }
    let documents = futures_util::future::join_all(kept.into_iter().map(|row| {
        let fields = fields.remove(&row.id).unwrap_or_default();
        let span = common::telemetry::job_span(
            messages::topics::REINDEX,
            traces.get(row.id.as_str()).copied().flatten(),
        );
        async move {
            let id = row.id.clone();
            (id, document(state, row, fields).instrument(span).await)
        }
    }))
    .await;
    // Every call not read as a document is gone, or its folder is being deleted.
    let mut actions: BTreeMap<String, Result<Action, JobError>> = ids
        .iter()
        .map(|id| (id.to_string(), Ok(Action::Remove(id.to_string()))))
        .collect();
    for (id, document) in documents {
        actions.insert(id, document.map(|d| Action::Upsert(Box::new(d))));
    }
    Ok(actions)
}

/// The call's search document: its row, its configured fields and its transcript's text.
async fn document(
    state: &AnalyticsState,
    row: store::CallRow,
    fields: BTreeMap<String, String>,
) -> Result<SearchDocument, JobError> {
    let transcript = state
        .objects
        .get(&row.transcript_key())
        .await
        .map_err(JobError::retry)?
        .ok_or_else(|| JobError::Retry(format!("the transcript of call {} is missing", row.id)))?;
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
    Ok(SearchDocument {
        id: row.id,
        company: row.company,
        organization: row.organization,
        folder: row.folder,
        datetime: row.datetime,
        text,
        fields,
    })
}
