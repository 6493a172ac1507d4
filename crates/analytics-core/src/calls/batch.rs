//! Uploaded calls committed together (`group_commit`, shards by folder). An upload's transcript is
//! checked and written to the object store by its own request; its row, configured metadata and
//! messages then wait for the folder's next batch, which inserts up to `MOST` calls in one transaction of
//! a statement per kind of write (`insert_many`).
//!
//! Committed one by one, an upload was a transaction of seven statements under SQLite's single write
//! lock, each a hand-off to the database's thread; under a load of uploads that was the most of their
//! cost after the transcript itself.
//!
//! The uploads' transcripts are written without waiting for the disk; the batch flushes them all with
//! one call (`ObjectStore::sync`) before its transaction, where an `fsync` per upload was a flush of the
//! file system each.
//!
//! A batch is all or nothing: when the flush, a statement or the commit fails, every call of it gets the error and
//! none is stored (each upload then removes its transcript). A call whose folder is gone or being deleted
//! is refused alone.

use std::sync::Arc;

use super::upload::{Outcome, Upload};
use super::{insert_many, NewCall};
use crate::error::AnalyticsError;
use crate::state::AnalyticsState;

/// Queues the call with the others of its folder's shard and waits until its batch is committed.
pub async fn submit(state: Arc<AnalyticsState>, upload: Upload) -> Outcome {
    let batches = state.call_batches.clone();
    let row = &upload.row;
    let folder = queue_key(&row.company, &row.organization, &row.folder);
    let commit = move |uploads: Vec<Upload>| {
        let state = state.clone();
        async move { commit(&state, uploads).await }
    };
    batches
        .submit(&folder, upload, commit)
        .await
        .unwrap_or_else(|| {
            Err(AnalyticsError::internal(
                "the batch of calls ended without an answer",
            ))
        })
}

/// What chooses the queue of a folder's uploads.
pub fn queue_key(company: &str, organization: &str, folder: &str) -> String {
    format!("{company}/{organization}/{folder}")
}

/// Inserts the batch in one transaction: each call's outcome, or the batch's error for all.
async fn commit(state: &AnalyticsState, uploads: Vec<Upload>) -> Vec<Outcome> {
    let calls: Vec<NewCall> = uploads
        .iter()
        .map(|u| NewCall {
            row: &u.row,
            metadata: &u.metadata,
        })
        .collect();
    let stored = async {
        // Every upload of the batch wrote its transcript before it queued: one flush makes them all
        // durable before any row names them.
        state.objects.sync().await?;
        let mut tx = state.db.begin().await?;
        let outcomes = insert_many(state, &mut tx, &calls).await?;
        if outcomes.iter().any(Result::is_ok) {
            tx.commit().await?;
        }
        Ok::<_, AnalyticsError>(outcomes)
    }
    .await;
    match stored {
        Ok(outcomes) => outcomes,
        Err(e) => uploads.iter().map(|_| Err(e.clone())).collect(),
    }
}
