//! `GET /calls/<company>/<organization>/<tId>`: a call as a reader sees it (docs/analytics-api.md,
//! Reading a call): its stored transcript with the metadata of its last change, whether or not the
//! metadata worker has written it yet, so the answer agrees with what `PATCH /metadata` answered.
//! `audio` serves its recording when it was transcribed from one.

pub mod audio;
pub mod range;

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use serde_json::Value;

use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::routes::paths::CallPath;
use crate::state::AnalyticsState;
use analytics_store::{self as store, CallMetadata};
use common::objects::ObjectStore;
use scoring::model::{metadata_json, stored_metadata, with_members};

type Answer = Result<HttpResponse, AnalyticsError>;

/// The stored transcript of a call, with the metadata of its last change
///
/// The transcript as it was added (`utterances` with their words, `filename`, `datetime`, `agent_id`,
/// `audio_seconds`, other fields as given), its `metadata` and `last_modified` as the call's last
/// change left them, and `tId`, `organization`, `folder`, and `audio`: whether
/// `/calls/{company}/{organization}/{tId}/audio` has its recording.
#[utoipa::path(get, path = "/calls/{company}/{organization}/{tId}", tag = "calls",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path)),
    responses((status = 200, description = "The call's transcript and metadata", body = Object),
        (status = 404, description = "Transcript not found: <tId> (text/html)")))]
pub async fn call(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<CallPath>,
) -> Answer {
    let found = find(&state, path.into_inner()).await?;
    let row = found.row;
    let bytes = state
        .objects
        .get(&row.transcript_key())
        .await?
        .ok_or_else(|| AnalyticsError::transcript_missing(&row.id))?;
    let audio = audio_key(state.objects.as_ref(), &row).await?.is_some();
    let saved = found.metadata;
    // Reading and writing the transcript is CPU work: on the matching pool, a fair share per company.
    let company = row.company.clone();
    let body = state
        .matching
        .run(&company, move || -> Result<Vec<u8>, AnalyticsError> {
            let metadata = match saved {
                Some(saved) => serde_json::from_str(&saved).map_err(AnalyticsError::internal)?,
                None => stored_metadata(&bytes).map_err(AnalyticsError::internal)?,
            };
            with_members(
                &bytes,
                [
                    ("tId", Value::from(row.id)),
                    ("organization", Value::from(row.organization)),
                    ("folder", Value::from(row.folder)),
                    ("last_modified", Value::from(row.last_modified)),
                    ("metadata", metadata_json(&metadata)),
                    ("audio", Value::Bool(audio)),
                ],
            )
            .map_err(AnalyticsError::internal)
        })
        .await??;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}

/// The call of the path, if it is in the path's company and organization; read without locking it.
pub(crate) async fn find(
    state: &AnalyticsState,
    path: CallPath,
) -> Result<CallMetadata, AnalyticsError> {
    let CallPath {
        company,
        organization,
        call,
    } = path;
    store::read_call_metadata(&state.db, &call)
        .await?
        .filter(|c| c.row.company == *company && c.row.organization == *organization)
        .ok_or_else(|| AnalyticsError::call_not_found(&call))
}

/// Where the call's recording is kept (`audio.<extension>` beside its transcript), if it has one.
pub(crate) async fn audio_key(
    objects: &dyn ObjectStore,
    row: &store::CallRow,
) -> Result<Option<String>, AnalyticsError> {
    let prefix = format!("{}audio.", row.object_prefix());
    Ok(objects.list(&prefix, None, 1).await?.into_iter().next())
}
