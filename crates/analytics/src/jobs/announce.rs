//! The messages a change publishes inside its own transaction (docs/scoring.md, The pipeline), so a call,
//! metadata or application change is announced exactly when it commits.

use common::bus::Message;
use messages::v1::{ReindexCall, RescoreScope, ScoreCall};

use crate::error::AnalyticsError;
use crate::state::AnalyticsState;
use crate::store::CallRow;

/// Publishes, inside `tx`, that the call's search document must be brought up to date.
pub async fn reindex_call(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    row: &CallRow,
) -> Result<(), AnalyticsError> {
    let message = ReindexCall {
        company: row.company.clone(),
        organization: row.organization.clone(),
        folder: row.folder.clone(),
        call_id: row.id.clone(),
        changed_at_ms: common::db::now_millis(),
    };
    publish(state, tx, messages::topics::REINDEX, &message).await
}

/// Publishes, inside `tx`, that the call must be scored by its folder's applications.
pub async fn score_call(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    row: &CallRow,
) -> Result<(), AnalyticsError> {
    let message = ScoreCall {
        company: row.company.clone(),
        organization: row.organization.clone(),
        folder: row.folder.clone(),
        call_id: row.id.clone(),
    };
    publish(state, tx, messages::topics::SCORE, &message).await
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
    publish(state, tx, messages::topics::RESCORE, &message).await
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
    publish(state, tx, messages::topics::RESCORE, &message).await
}

async fn publish(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    topic: &str,
    body: &impl messages::Message,
) -> Result<(), AnalyticsError> {
    let message = Message::new(topic, body.encode_to_vec())
        .with_traceparent(common::telemetry::current_traceparent());
    state
        .bus
        .publish(tx, &message)
        .await
        .map_err(AnalyticsError::internal)
}
