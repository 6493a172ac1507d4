//! `POST /transcribe` (docs/transcription.md): a recording in, its transcript out. With a `callback`
//! the answer is `{"requestid"}` at once and the result is posted to the callback when ready; without
//! one the request waits for its transcript and answers it in the requested `output` format (the JSON
//! names its `requestid`; every answer carries it in the `Request-Id` header too). Either way the work is
//! a job on the bus, done by the transcription workers, which may run in other processes.

use std::time::Duration;

use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::{read_authorized_form, Owner};
use crate::progress::wait;
use crate::state::TranscriptionState;
use crate::submit::{submit, Submission};
use analytics_core::error::AnalyticsError;

/// The answer of a request with a callback.
#[derive(Debug, Serialize, ToSchema)]
pub struct Accepted {
    pub requestid: String,
}

/// The header that names the request on every answer.
pub const REQUEST_ID_HEADER: &str = "Request-Id";

/// Transcribe a recording
///
/// A multipart form: `file` (WAV, FLAC, MP3 or Ogg Vorbis; mono or stereo), `token` (or the `token` query
/// parameter, with the write scope), `output` (`json`, the default, `text`, `srt` or `vtt`), `callback`
/// (an http or https address that receives the result), `attempts` (callback attempts, 1 to 1000,
/// default 100) and `diarize` (`true` separates two speakers in mono audio).
#[utoipa::path(post, path = "/transcribe", tag = "transcription",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    request_body(content_type = "multipart/form-data", content = super::form_schema::TranscribeForm),
    responses(
        (status = 200, description = "With a callback: {\"requestid\"}. Without: the transcript in the requested format", body = Accepted),
        (status = 400, description = "A field is invalid, or the callback address is refused"),
        (status = 413, description = "The file is larger than the upload limit"),
        (status = 422, description = "The recording could not be transcribed (the error names why)"),
        (status = 504, description = "The transcript was not ready in time: read it later at /transcribe/{requestid}/result")))]
pub async fn transcribe(
    state: Data<TranscriptionState>,
    req: HttpRequest,
    payload: actix_web::web::Payload,
) -> Result<HttpResponse, AnalyticsError> {
    let (form, file, access) = read_authorized_form(&state, &req, payload, Owner::Token).await?;
    if form.metadata.is_some() {
        return Err(AnalyticsError::BadRequest(
            "metadata applies to calls added to a folder: POST /transcribe/<company>/<organization>/<folder>".into(),
        ));
    }
    let asked = form.asked(&state, None).await?;
    let with_callback = asked.callback.is_some();
    let request = submit(
        &state,
        Submission {
            company: access.claims.company.clone(),
            organization: String::new(),
            folder: String::new(),
            filename: form.file_name.clone().unwrap_or_else(|| "audio".into()),
            audio: file,
            output: asked.output,
            diarize: asked.diarize,
            metadata: Default::default(),
            callback: asked.callback,
        },
    )
    .await?;
    if with_callback {
        return Ok(HttpResponse::Ok()
            .insert_header((REQUEST_ID_HEADER, request.id.clone()))
            .json(Accepted {
                requestid: request.id,
            }));
    }
    let waited = wait(
        &state,
        &request.id,
        Duration::from_millis(state.config.transcribe_wait_ms),
    )
    .await?;
    match waited {
        None => Ok(HttpResponse::GatewayTimeout()
            .insert_header((REQUEST_ID_HEADER, request.id.clone()))
            .json(serde_json::json!({
                "requestid": request.id,
                "error": "the transcript was not ready in time; read it later at /transcribe/<requestid>/result",
            }))),
        Some(done) => super::progress::answer_result(&state, &done).await,
    }
}
