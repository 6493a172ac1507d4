//! Adding a call to a folder, the one way both a transcript upload and a finished transcription do it
//! (docs/analytics-api.md, Adding calls): the transcript is checked and stamped (`prepare`), written to
//! the object store first (a committed row always has its transcript), then its row, its configured
//! metadata and the messages that index and score it are written in the caller's transaction
//! (`insert`), which holds the folder so that a deletion starting meanwhile either sees the call or
//! refuses it.

use chrono::{SecondsFormat, Utc};
use common::db::Tx;
use serde_json::{Map, Value};

use crate::error::AnalyticsError;
use crate::jobs::announce;
use crate::model::{parse_timezone, Stamp, Transcript};
use crate::state::AnalyticsState;
use crate::store::{self, CallRow};

/// Who a new call is and where it goes.
pub struct Target<'a> {
    pub company: &'a str,
    pub organization: &'a str,
    pub folder: &'a str,
    pub call_id: &'a str,
    pub request_id: &'a str,
    /// The uploaded file's name, used when the transcript names none.
    pub upload_name: Option<&'a str>,
}

/// Checks and stamps the transcript JSON `file` for `target`, with `metadata` laid over its own.
pub async fn prepare(
    state: &AnalyticsState,
    target: &Target<'_>,
    file: &[u8],
    metadata: Option<Map<String, Value>>,
) -> Result<(CallRow, Transcript), AnalyticsError> {
    let org = store::get_organization(&state.db, target.company, target.organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(target.organization))?;
    let zone = parse_timezone(&org.timezone)?;
    let now = Utc::now();
    let last_modified = now.to_rfc3339_opts(SecondsFormat::Millis, true);
    let transcript = Transcript::parse(
        file,
        metadata,
        &Stamp {
            call_id: target.call_id,
            request_id: target.request_id,
            last_modified: &last_modified,
            upload_name: target.upload_name,
            timezone: zone,
            now,
        },
    )?;
    let row = CallRow {
        id: target.call_id.to_string(),
        company: target.company.to_string(),
        organization: target.organization.to_string(),
        folder: target.folder.to_string(),
        request_id: target.request_id.to_string(),
        datetime: transcript.datetime.clone(),
        last_modified,
        filename: transcript.filename.clone(),
        agent_id: transcript.agent_id.clone(),
        audio_seconds: transcript.audio_seconds,
    };
    Ok((row, transcript))
}

/// Writes the call's transcript JSON to the object store.
pub async fn put_transcript(
    state: &AnalyticsState,
    row: &CallRow,
    transcript: &Transcript,
) -> Result<(), AnalyticsError> {
    state
        .objects
        .put(&row.transcript_key(), transcript.stored.clone())
        .await?;
    Ok(())
}

/// Removes the transcript of a call whose transaction did not commit.
pub async fn forget_transcript(state: &AnalyticsState, row: &CallRow) {
    let key = row.transcript_key();
    if let Err(e) = state.objects.delete(&key).await {
        tracing::warn!(error = %e, %key, "could not remove the transcript of a call not stored");
    }
}

/// The call's row, its configured metadata and its reindex and score messages, inside `tx`.
pub async fn insert(
    state: &AnalyticsState,
    tx: &mut Tx,
    row: &CallRow,
    transcript: &Transcript,
) -> Result<(), AnalyticsError> {
    let folder = store::get_folder(&mut *tx, &row.company, &row.organization, &row.folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&row.folder))?;
    let settings = folder.usable_settings()?;
    store::insert_call(&mut *tx, row).await?;
    for (field, value) in &transcript.metadata {
        if settings.configures(field) {
            store::set_metadata(&mut *tx, &row.id, field, value).await?;
        }
    }
    announce::reindex_call(state, tx, row).await?;
    announce::score_call(state, tx, row).await?;
    Ok(())
}
