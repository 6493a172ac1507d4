//! `GET /transcribe/<requestid>` (the progress of a request: queued, transcribing, done or failed, and
//! its callback's attempts) and `GET /transcribe/<requestid>/result` (its transcript in the requested
//! format, once done). Only the request's own company may read either; to another company the request
//! does not exist.

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use scoring::names::RequestId;
use speech::output::Output;

use super::direct::REQUEST_ID_HEADER;
use crate::progress::Progress;
use crate::state::TranscriptionState;
use analytics_core::access::{authorize_own, request_token, Need};
use analytics_core::error::AnalyticsError;
use analytics_store::requests::{self, DONE, FAILED};
use analytics_store::RequestRow;

async fn own_request(
    state: &TranscriptionState,
    req: &HttpRequest,
    id: &str,
) -> Result<RequestRow, AnalyticsError> {
    let access = authorize_own(state, request_token(req).as_deref(), Need::Read).await?;
    let not_found = || AnalyticsError::NotFound(format!("Request not found: {id}"));
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(not_found());
    }
    requests::get_request(&state.db, id)
        .await?
        .filter(|row| row.company == access.claims.company)
        .ok_or_else(not_found)
}

/// The progress of a transcription request
#[utoipa::path(get, path = "/transcribe/{requestid}", tag = "transcription",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("requestid" = String, Path)),
    responses((status = 200, body = Progress),
        (status = 404, description = "Request not found: <requestid>")))]
pub async fn progress(
    state: Data<TranscriptionState>,
    req: HttpRequest,
    path: Path<RequestId>,
) -> Result<HttpResponse, AnalyticsError> {
    let row = own_request(&state, &req, &path).await?;
    Ok(HttpResponse::Ok()
        .insert_header((REQUEST_ID_HEADER, row.id.clone()))
        .json(Progress::from(&row)))
}

/// The transcript of a finished request
///
/// In the format the request asked for. 409 while it is being transcribed; 422 with the error when it
/// failed.
#[utoipa::path(get, path = "/transcribe/{requestid}/result", tag = "transcription",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("requestid" = String, Path)),
    responses((status = 200, description = "The transcript"),
        (status = 404, description = "Request not found: <requestid>"),
        (status = 409, description = "Not transcribed yet"),
        (status = 422, description = "The transcription failed")))]
pub async fn result(
    state: Data<TranscriptionState>,
    req: HttpRequest,
    path: Path<RequestId>,
) -> Result<HttpResponse, AnalyticsError> {
    let row = own_request(&state, &req, &path).await?;
    answer_result(&state, &row).await
}

/// The answer for an ended request: its rendered result, or its error.
pub(super) async fn answer_result(
    state: &TranscriptionState,
    row: &RequestRow,
) -> Result<HttpResponse, AnalyticsError> {
    if row.state == FAILED {
        return Ok(HttpResponse::UnprocessableEntity()
            .insert_header((REQUEST_ID_HEADER, row.id.clone()))
            .json(serde_json::json!({"requestid": row.id, "error": row.error})));
    }
    if row.state != DONE {
        return Err(AnalyticsError::Conflict(format!(
            "request {} is {}: its transcript is not ready",
            row.id, row.state
        )));
    }
    let output: Output = row.output.parse().map_err(AnalyticsError::internal)?;
    let bytes =
        state.objects.get(&row.result_key).await?.ok_or_else(|| {
            AnalyticsError::internal(format!("the result of {} is missing", row.id))
        })?;
    Ok(HttpResponse::Ok()
        .insert_header((REQUEST_ID_HEADER, row.id.clone()))
        .content_type(output.content_type())
        .body(bytes))
}
