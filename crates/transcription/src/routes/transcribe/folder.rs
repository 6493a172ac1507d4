//! `POST /transcribe/<company>/<organization>/<folder>`: adds a call to a folder (docs/analytics-api.md,
//! Adding calls). A multipart form with `token`, `file` and, optionally, `metadata` (a JSON object laid
//! over the transcript's own). A transcript JSON file is stored as the call at once: its JSON in the
//! object store, its row and configured metadata in the database, and the messages that index and score
//! it, in one transaction. A recording is queued for transcription (docs/transcription.md) and becomes
//! the call when transcribed; `output`, `diarize`, `callback` and `attempts` apply to it as to
//! `POST /transcribe`, the folder's `callback` being the default address.

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use serde::Serialize;
use utoipa::ToSchema;

use super::direct::REQUEST_ID_HEADER;
use super::{read_authorized_form, Owner};
use crate::state::TranscriptionState;
use crate::submit::{submit, Submission};
use analytics_core::calls::batch;
use analytics_core::calls::upload::Upload;
use analytics_core::calls::{self, Target};
use analytics_core::error::AnalyticsError;
use analytics_core::routes::paths::FolderPath;
use analytics_store as store;

/// The answer: the request's id and the new call's id.
#[derive(Debug, Serialize, ToSchema)]
pub struct Added {
    pub requestid: String,
    #[serde(rename = "tId")]
    pub t_id: String,
}

/// Whether the upload is a transcript JSON (declared so, or named `.json`, or starting with `{`).
fn is_transcript(file_type: Option<&str>, file_name: Option<&str>, bytes: &[u8]) -> bool {
    file_type == Some("application/json")
        || file_name.is_some_and(|n| n.to_ascii_lowercase().ends_with(".json"))
        || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Add a call to a folder
///
/// A multipart form: `token` (or the `token` query parameter), `file` (a transcript JSON, or a
/// recording to transcribe) and optionally `metadata` (a JSON object); for recordings also `output`,
/// `diarize`, `callback` and `attempts` as for `POST /transcribe`. A transcript is searchable once its
/// reindex message has been processed; a recording once transcribed (see `GET /transcribe/{requestid}`).
#[utoipa::path(post, path = "/transcribe/{company}/{organization}/{folder}", tag = "calls",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path)),
    request_body(content_type = "multipart/form-data", content = super::form_schema::AddCallForm),
    responses((status = 200, body = Added),
        (status = 400, description = "A field is invalid, or the callback address is refused"),
        (status = 404, description = "Folder not found: <folder>"),
        (status = 413, description = "The file is larger than the upload limit")))]
pub async fn add_call(
    state: Data<TranscriptionState>,
    req: HttpRequest,
    path: Path<FolderPath>,
    payload: actix_web::web::Payload,
) -> Result<HttpResponse, AnalyticsError> {
    let FolderPath {
        company,
        organization,
        folder,
    } = path.into_inner();
    let (mut form, file, _) =
        read_authorized_form(&state, &req, payload, Owner::Path(&company)).await?;
    // The folder before anything is stored: a name that cannot be one is a 400, a folder that is not
    // there (or being deleted) refuses the upload with nothing written. Read without locking it, so an
    // upload never waits here for a batch holding the folder; the batch reads it again.
    folder.check()?;
    let settings = store::peek_folder(&state.db, &company, &organization, &folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&folder))?
        .usable_settings()?;
    if !is_transcript(form.file_type.as_deref(), form.file_name.as_deref(), &file) {
        let folder_callback = settings
            .callback
            .url
            .clone()
            .map(|url| (url, settings.callback.attempts));
        let asked = form.asked(&state, folder_callback).await?;
        let request = submit(
            &state,
            Submission {
                company: company.into(),
                organization: organization.into(),
                folder: folder.into(),
                filename: form.file_name.clone().unwrap_or_else(|| "audio".into()),
                audio: file,
                output: asked.output,
                diarize: asked.diarize,
                metadata: form.metadata.take().unwrap_or_default(),
                callback: asked.callback,
            },
        )
        .await?;
        return Ok(added(request.id, request.call_id));
    }

    let call_id = uuid::Uuid::new_v4().to_string();
    let request_id = uuid::Uuid::new_v4().to_string();
    let target = Target {
        company: &company,
        organization: &organization,
        folder: &folder,
        call_id: &call_id,
        request_id: &request_id,
        upload_name: form.file_name.as_deref(),
    };
    let (row, transcript) = calls::prepare(&state, &target, &file, form.metadata.take()).await?;
    // The object first: a committed row always has its transcript (its batch flushes it to disk before
    // committing). A call not stored leaves an object no row names, which is removed.
    calls::put_upload_transcript(&state, &row, transcript.stored).await?;
    let upload = Upload {
        row,
        metadata: transcript.metadata,
    };
    let key = upload.row.transcript_key();
    if let Err(e) = batch::submit(state.core.clone(), upload).await {
        calls::forget_transcript(&state, &key).await;
        return Err(e);
    }
    Ok(added(request_id, call_id))
}

/// The answer of an upload: the request and the call it is (or becomes), the request's id in the
/// `Request-Id` header too.
fn added(requestid: String, t_id: String) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((REQUEST_ID_HEADER, requestid.clone()))
        .json(Added { requestid, t_id })
}
