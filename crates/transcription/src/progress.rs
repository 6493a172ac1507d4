//! The progress of a request as `GET /transcribe/<requestid>` reports it, and the wait of a caller that
//! asked for its transcript without a callback. The wait reads the request's row, so it works whether
//! the worker runs in this process or in another replica.

use std::time::{Duration, Instant};

use serde::Serialize;
use utoipa::ToSchema;

use crate::state::TranscriptionState;
use analytics_core::error::AnalyticsError;
use analytics_store::requests::{self, CALLBACK_NONE, DONE, FAILED};
use analytics_store::RequestRow;

/// A request's state.
#[derive(Debug, Serialize, ToSchema)]
pub struct Progress {
    pub requestid: String,
    /// `queued`, `transcribing`, `done` or `failed`.
    pub status: String,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub filename: String,
    /// `json`, `text`, `srt` or `vtt`.
    pub output: String,
    pub diarize: bool,
    /// The recording's length, once transcribed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio_seconds: Option<f64>,
    /// The folder and call a folder upload becomes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    #[serde(rename = "tId", skip_serializing_if = "Option::is_none")]
    pub t_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback: Option<CallbackProgress>,
    /// UTC, RFC 3339.
    pub created: String,
    pub updated: String,
}

/// Where a request's callback stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackProgress {
    /// The address, its query left out (`?…`).
    pub url: String,
    /// `none` (not yet: the transcript is not ready), `pending`, `delivered` or `cancelled` (the
    /// attempts ran out).
    pub state: String,
    pub attempts: i64,
    pub max_attempts: i64,
    /// Why the last attempt failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// A callback address as progress shows it: a receiver's key often rides in the query, and the progress
/// is read with a read token, so the query is left out.
fn without_query(url: &str) -> String {
    match url.split_once('?') {
        Some((before, _)) => format!("{before}?…"),
        None => url.to_string(),
    }
}

fn some(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

impl From<&RequestRow> for Progress {
    fn from(row: &RequestRow) -> Progress {
        let ended = row.state == DONE || row.state == FAILED;
        Progress {
            requestid: row.id.clone(),
            status: row.state.clone(),
            error: some(&row.error),
            filename: row.filename.clone(),
            output: row.output.clone(),
            diarize: row.diarize,
            audio_seconds: ended.then_some(row.audio_seconds).filter(|s| *s > 0.0),
            organization: some(&row.organization),
            folder: some(&row.folder),
            t_id: some(&row.call_id),
            callback: some(&row.callback_url).map(|url| CallbackProgress {
                url: without_query(&url),
                state: if row.callback_state.is_empty() {
                    CALLBACK_NONE.into()
                } else {
                    row.callback_state.clone()
                },
                attempts: row.callback_attempts,
                max_attempts: row.callback_max_attempts,
                last_error: some(&row.callback_error),
            }),
            created: row.created.clone(),
            updated: row.updated.clone(),
        }
    }
}

/// Waits until the request is done or failed, or `timeout` passed (then `None`).
pub async fn wait(
    state: &TranscriptionState,
    id: &str,
    timeout: Duration,
) -> Result<Option<RequestRow>, AnalyticsError> {
    let deadline = Instant::now() + timeout;
    // Short first looks (a short recording is done in a fraction of a second), then a steady pace that
    // costs the database little while a long one is transcribed.
    let mut pause = Duration::from_millis(20);
    loop {
        let row = requests::get_request(&state.db, id)
            .await?
            .ok_or_else(|| AnalyticsError::internal(format!("request {id} vanished")))?;
        if row.state == DONE || row.state == FAILED {
            return Ok(Some(row));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(Duration::from_millis(250));
    }
}
