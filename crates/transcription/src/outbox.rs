//! Transcription's messages on the bus, each published inside the transaction of the change it
//! announces (the core's `outbox::publish`): a request's job, and the post of its result to its callback.

use analytics_core::error::AnalyticsError;
use analytics_core::outbox::publish;
use analytics_core::AnalyticsState;
use analytics_store::RequestRow;
use callbacks::body::Body;
use messages::v1::{CallbackDelivery, TranscriptionJob};

/// Publishes, inside `tx`, the job that transcribes the request's recording.
pub async fn transcribe(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    row: &RequestRow,
) -> Result<(), AnalyticsError> {
    let message = TranscriptionJob {
        request_id: row.id.clone(),
        call_id: row.call_id.clone(),
        company: row.company.clone(),
        organization: row.organization.clone(),
        folder: row.folder.clone(),
        audio_key: row.audio_key.clone(),
        diarize: row.diarize,
        callback_url: row.callback_url.clone(),
    };
    publish(
        state,
        tx,
        messages::topics::TRANSCRIBE,
        &row.company,
        &message,
    )
    .await
}

/// Publishes, inside `tx`, the post of `body` to the request's callback address. Every attempt of the
/// delivery carries one id, the receiver's key for deduplication.
pub async fn callback(
    state: &AnalyticsState,
    tx: &mut common::db::Tx,
    row: &RequestRow,
    body: Body,
) -> Result<(), AnalyticsError> {
    let message = CallbackDelivery {
        delivery_id: format!("msg_{}", uuid::Uuid::new_v4().simple()),
        company: row.company.clone(),
        url: row.callback_url.clone(),
        body: body.bytes,
        content_type: body.content_type,
        request_id: row.id.clone(),
        max_attempts: u32::try_from(row.callback_max_attempts).unwrap_or(1).max(1),
    };
    publish(
        state,
        tx,
        messages::topics::CALLBACK,
        &row.company,
        &message,
    )
    .await
}
