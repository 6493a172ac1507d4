//! The outbox's messages: what a change publishes on the bus inside its own transaction (docs/scoring.md,
//! The pipeline), so that a call, metadata or application change is announced exactly when it commits
//! (the transcription crate publishes its jobs and callbacks through `publish`). Each names its company
//! as its share of the bus, so workers take the companies' messages in turn.

use common::bus::Message;
use messages::v1::{ReindexCall, RescoreScope, ScoreCall, WriteMetadata};

use crate::error::AnalyticsError;
use crate::state::AnalyticsState;
use analytics_store::CallRow;
use scoring::names::{CompanyName, FolderName, OrgName};

/// The message that has the call's search document brought up to date.
pub fn reindex_message(row: &CallRow) -> Message {
    reindex_of(&row.company, &row.organization, &row.folder, &row.id)
}

/// The reindex message of call `call_id` of a folder.
fn reindex_of(company: &str, organization: &str, folder: &str, call_id: &str) -> Message {
    let body = ReindexCall {
        company: company.into(),
        organization: organization.into(),
        folder: folder.into(),
        call_id: call_id.into(),
        changed_at_ms: common::db::now_millis(),
    };
    message(messages::topics::REINDEX, company, &body)
}

/// Publishes, inside `tx`, that the search documents of these calls of a folder must be brought up to
/// date (a configured field of theirs was removed).
pub async fn reindex_calls(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    company: &CompanyName,
    organization: &OrgName,
    folder: &FolderName,
    calls: &[String],
) -> Result<(), AnalyticsError> {
    for chunk in calls.chunks(1000) {
        let messages: Vec<Message> = chunk
            .iter()
            .map(|call| reindex_of(company, organization, folder, call))
            .collect();
        state
            .bus
            .publish_many(tx, &messages)
            .await
            .map_err(AnalyticsError::internal)?;
    }
    Ok(())
}

/// The message that has the call's pending metadata change written into its stored transcript.
pub fn write_metadata_message(row: &CallRow) -> Message {
    let body = WriteMetadata {
        company: row.company.clone(),
        organization: row.organization.clone(),
        folder: row.folder.clone(),
        call_id: row.id.clone(),
    };
    message(messages::topics::METADATA, &row.company, &body)
}

/// The message that has the call scored by its folder's applications.
pub fn score_message(row: &CallRow) -> Message {
    let body = ScoreCall {
        company: row.company.clone(),
        organization: row.organization.clone(),
        folder: row.folder.clone(),
        call_id: row.id.clone(),
    };
    message(messages::topics::SCORE, &row.company, &body)
}

/// Publishes, inside `tx`, that every call of a folder must be rescored (its `apps` changed).
pub async fn rescore_folder(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    company: &str,
    organization: &str,
    folder: &str,
) -> Result<(), AnalyticsError> {
    let message = RescoreScope {
        job_id: uuid::Uuid::new_v4().to_string(),
        company: company.into(),
        organization: organization.into(),
        folder: folder.into(),
        app: String::new(),
    };
    publish(state, tx, messages::topics::RESCORE, company, &message).await
}

/// Publishes, inside `tx`, that every call of every folder using the application must be rescored (it
/// changed or was deleted).
pub async fn rescore_app(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    company: &str,
    app: &str,
) -> Result<(), AnalyticsError> {
    let message = RescoreScope {
        job_id: uuid::Uuid::new_v4().to_string(),
        company: company.into(),
        organization: String::new(),
        folder: String::new(),
        app: app.into(),
    };
    publish(state, tx, messages::topics::RESCORE, company, &message).await
}

/// Publishes `body` as a message of `topic`, `company`'s work, inside `tx`.
pub async fn publish(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    topic: &str,
    company: &str,
    body: &impl messages::Message,
) -> Result<(), AnalyticsError> {
    send(state, tx, message(topic, company, body)).await
}

async fn send(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    message: Message,
) -> Result<(), AnalyticsError> {
    state
        .bus
        .publish(tx, &message)
        .await
        .map_err(AnalyticsError::internal)
}

/// A message of `topic`, `company`'s work (its turn among the companies' messages of the topic: see
/// docs/operations.md), carrying the trace of the work that sends it.
pub(crate) fn message(topic: &str, company: &str, body: &impl messages::Message) -> Message {
    Message::new(topic, body.encode_to_vec())
        .with_share(company)
        .with_traceparent(common::telemetry::current_traceparent())
}
