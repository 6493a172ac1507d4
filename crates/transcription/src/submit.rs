//! Accepting a recording: its audio goes to the object store first, then its request row and the job
//! message that announces it commit in one transaction, so every accepted request is transcribed and
//! none is announced that was not stored. A folder upload holds the folder while it commits, like any
//! new call, so a deletion starting meanwhile either sees the request or refuses it.

use serde_json::{Map, Value};
use speech::output::Output;

use crate::outbox;
use crate::state::TranscriptionState;
use analytics_core::error::AnalyticsError;
use analytics_store as store;
use analytics_store::requests::{self, CALLBACK_NONE, QUEUED};
use analytics_store::RequestRow;

/// A recording to transcribe and what to do with the result.
#[derive(Debug)]
pub struct Submission {
    pub company: String,
    /// Both empty for `POST /transcribe`, which stores no call.
    pub organization: String,
    pub folder: String,
    pub filename: String,
    pub audio: Vec<u8>,
    pub output: Output,
    pub diarize: bool,
    /// Laid over the transcript's own metadata when the call is stored.
    pub metadata: Map<String, Value>,
    /// Where to post the result, with the attempts allowed.
    pub callback: Option<(String, u32)>,
}

/// Stores the submission and queues its job; the request as stored.
pub async fn submit(
    state: &TranscriptionState,
    s: Submission,
) -> Result<RequestRow, AnalyticsError> {
    // The folder upload's handler has read the folder already (its settings); it is checked again,
    // locked, when the request commits.
    let in_folder = !s.folder.is_empty();
    let now = common::time::now_rfc3339();
    let (callback_url, attempts) = s.callback.clone().unwrap_or_default();
    let mut row = RequestRow {
        id: uuid::Uuid::new_v4().to_string(),
        company: s.company.clone(),
        organization: s.organization.clone(),
        folder: s.folder.clone(),
        call_id: if in_folder {
            uuid::Uuid::new_v4().to_string()
        } else {
            String::new()
        },
        filename: s.filename.clone(),
        output: s.output.name().into(),
        diarize: s.diarize,
        metadata: Value::Object(s.metadata.clone()).to_string(),
        audio_key: String::new(),
        result_key: String::new(),
        state: QUEUED.into(),
        error: String::new(),
        audio_seconds: 0.0,
        callback_url,
        callback_state: CALLBACK_NONE.into(),
        callback_attempts: 0,
        callback_max_attempts: i64::from(attempts.max(1)),
        callback_error: String::new(),
        created: now.clone(),
        updated: now,
    };
    row.audio_key = crate::keys::audio_key(&row, &crate::keys::audio_extension(&s.filename));
    state.objects.put(&row.audio_key, s.audio).await?;
    let queued = queue(state, &row).await;
    if queued.is_err() {
        if let Err(e) = state.objects.delete(&row.audio_key).await {
            tracing::warn!(error = %e, key = %row.audio_key, "could not remove the audio of a request not stored");
        }
    }
    queued?;
    Ok(row)
}

async fn queue(state: &TranscriptionState, row: &RequestRow) -> Result<(), AnalyticsError> {
    let mut tx = state.db.begin().await?;
    if !row.folder.is_empty() {
        store::get_folder(&mut tx, &row.company, &row.organization, &row.folder)
            .await?
            .ok_or_else(|| AnalyticsError::scope_not_found(&row.folder))?
            .usable_settings()?;
    }
    requests::insert_request(&mut tx, row).await?;
    outbox::transcribe(state, &mut tx, row).await?;
    tx.commit().await?;
    Ok(())
}
