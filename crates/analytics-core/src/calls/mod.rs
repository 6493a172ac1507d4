//! Adding a call to a folder, the one way both a transcript upload and a finished transcription do it
//! (docs/analytics-api.md, Adding calls): the transcript is checked and stamped (`prepare`), written to
//! the object store first (a committed row always has its transcript), then its row, its configured
//! metadata and the messages that index and score it are written in one transaction (`insert_many`),
//! which holds the folder so that a deletion starting meanwhile either sees the call or refuses it. An
//! upload's call is committed together with the others waiting (`batch`); a finished transcription's in
//! the transaction that ends its request (`insert`).

pub mod batch;
pub mod upload;

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

use chrono::Utc;
use common::db::Tx;
use serde_json::{Map, Value};

use crate::error::AnalyticsError;
use crate::outbox;
use crate::state::AnalyticsState;
use analytics_store::{self as store, CallRow, FieldValue, FolderKey};
use scoring::model::{parse_timezone, FolderSettings, Stamp, Transcript};

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
    let last_modified = common::time::rfc3339(now);
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

/// Writes an upload's transcript JSON to the object store without waiting for the disk: the batch that
/// stores the call's row flushes its calls' transcripts together first (`batch`).
pub async fn put_upload_transcript(
    state: &AnalyticsState,
    row: &CallRow,
    stored: Vec<u8>,
) -> Result<(), AnalyticsError> {
    state
        .objects
        .put_unsynced(&row.transcript_key(), stored)
        .await?;
    Ok(())
}

/// Removes the transcript (its object `key`) of a call whose transaction did not commit.
pub async fn forget_transcript(state: &AnalyticsState, key: &str) {
    if let Err(e) = state.objects.delete(key).await {
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
    let new = NewCall {
        row,
        metadata: &transcript.metadata,
    };
    insert_many(state, tx, &[new]).await?.remove(0)
}

/// A call to insert: its row and every metadata field it has (those its folder configures are kept in
/// the database).
pub struct NewCall<'a> {
    pub row: &'a CallRow,
    pub metadata: &'a BTreeMap<String, String>,
}

/// The calls' rows, their configured metadata and their reindex and score messages, inside `tx`, in one
/// statement of each kind: for each call, whether it was inserted, or why not (its folder is gone or
/// being deleted, which changes nothing of the others). An error of the statements is the whole batch's.
pub async fn insert_many(
    state: &AnalyticsState,
    tx: &mut Tx,
    calls: &[NewCall<'_>],
) -> Result<Vec<Result<(), AnalyticsError>>, AnalyticsError> {
    let mut folders: HashMap<FolderKey, Result<FolderSettings, AnalyticsError>> = HashMap::new();
    for call in calls {
        let row = call.row;
        let key = row.folder_key();
        if let Entry::Vacant(entry) = folders.entry(key) {
            let folder =
                store::get_folder(&mut *tx, key.company, key.organization, key.folder).await?;
            entry.insert(match folder {
                Some(folder) => folder.usable_settings().map_err(AnalyticsError::from),
                None => Err(AnalyticsError::scope_not_found(&row.folder)),
            });
        }
    }
    let mut outcomes = Vec::with_capacity(calls.len());
    let mut rows = Vec::new();
    let mut fields = Vec::new();
    let mut messages = Vec::new();
    for call in calls {
        let row = call.row;
        let settings = match &folders[&row.folder_key()] {
            Ok(settings) => settings,
            Err(refused) => {
                outcomes.push(Err(refused.clone()));
                continue;
            }
        };
        rows.push(row);
        for (field, value) in call.metadata {
            if settings.configures(field) {
                fields.push(FieldValue {
                    call_id: &row.id,
                    field,
                    value,
                });
            }
        }
        messages.push(outbox::reindex_message(row));
        messages.push(outbox::score_message(row));
        outcomes.push(Ok(()));
    }
    store::insert_calls(&mut *tx, &rows).await?;
    store::set_metadata_rows(&mut *tx, &fields).await?;
    state
        .bus
        .publish_many(tx, &messages)
        .await
        .map_err(AnalyticsError::internal)?;
    Ok(outcomes)
}
