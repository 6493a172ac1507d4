//! `POST /transcribe/<company>/<organization>/<folder>`: adds a call to a folder (docs/analytics-api.md,
//! Adding calls). A multipart form with `token`, `file` and, optionally, `metadata` (a JSON object laid
//! over the transcript's own). A transcript JSON file is stored as the call: its JSON in the object store,
//! its row and configured metadata in the database, and a reindex message that brings it into search,
//! the rows and the message in one transaction. Audio files are refused with 415 until transcription is
//! built.

use actix_multipart::Multipart;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use chrono::{SecondsFormat, Utc};
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::access::{authorize, request_token, Need};
use crate::error::AnalyticsError;
use crate::jobs::announce;
use crate::model::{parse_timezone, Stamp, Transcript};
use crate::state::AnalyticsState;
use crate::store::{self, CallRow};

/// The answer: the request's id and the new call's id.
#[derive(Debug, Serialize, ToSchema)]
pub struct Added {
    pub requestid: String,
    #[serde(rename = "tId")]
    pub t_id: String,
}

/// The parts of the form.
#[derive(Default)]
struct Form {
    token: Option<String>,
    file: Option<Vec<u8>>,
    file_name: Option<String>,
    file_type: Option<String>,
    metadata: Option<Map<String, Value>>,
}

const TEXT_FIELD_LIMIT: usize = 64 * 1024;

async fn read_form(mut multipart: Multipart, limit: usize) -> Result<Form, AnalyticsError> {
    let mut form = Form::default();
    let mut total = 0usize;
    while let Some(field) = multipart.next().await {
        let mut field = field
            .map_err(|e| AnalyticsError::BadRequest(format!("invalid multipart body: {e}")))?;
        let name = field.name().unwrap_or_default().to_string();
        let is_file = name == "file";
        if is_file {
            form.file_name = field
                .content_disposition()
                .and_then(|d| d.get_filename())
                .map(str::to_string);
            form.file_type = field.content_type().map(|m| m.essence_str().to_string());
        }
        let cap = if is_file { limit } else { TEXT_FIELD_LIMIT };
        let mut bytes = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk
                .map_err(|e| AnalyticsError::BadRequest(format!("invalid multipart body: {e}")))?;
            total += chunk.len();
            if bytes.len() + chunk.len() > cap || total > limit + TEXT_FIELD_LIMIT {
                return Err(AnalyticsError::TooLarge(format!(
                    "the {name} field is larger than {cap} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        let repeated = || AnalyticsError::BadRequest(format!("the {name} field is given twice"));
        let text = || {
            String::from_utf8(bytes.clone()).map_err(|_| {
                AnalyticsError::BadRequest(format!("the {name} field is not UTF-8 text"))
            })
        };
        match name.as_str() {
            "file" if form.file.is_some() => return Err(repeated()),
            "file" => form.file = Some(bytes),
            "token" if form.token.is_some() => return Err(repeated()),
            "token" => form.token = Some(text()?.trim().to_string()),
            "metadata" if form.metadata.is_some() => return Err(repeated()),
            "metadata" => form.metadata = Some(super::json_body(text()?.as_bytes(), None)?),
            other => {
                return Err(AnalyticsError::BadRequest(format!(
                    "unknown form field {other:?}: expected token, file and metadata"
                )))
            }
        }
    }
    Ok(form)
}

/// Whether the upload is a transcript JSON (declared so, or named `.json`, or starting with `{`).
fn is_transcript(form: &Form, bytes: &[u8]) -> bool {
    form.file_type.as_deref() == Some("application/json")
        || form
            .file_name
            .as_deref()
            .is_some_and(|n| n.to_ascii_lowercase().ends_with(".json"))
        || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Add a call to a folder
///
/// A multipart form: `token` (or the `token` query parameter), `file` (a transcript JSON) and optionally
/// `metadata` (a JSON object). The call is searchable once its reindex message has been processed.
#[utoipa::path(post, path = "/transcribe/{company}/{organization}/{folder}", tag = "calls",
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path)),
    request_body(content_type = "multipart/form-data", content = Object,
        description = "token, file (transcript JSON), metadata (JSON object)"),
    responses((status = 200, body = Added),
        (status = 404, description = "Folder not found: <folder>"),
        (status = 415, description = "An audio file: transcription is not available yet")))]
pub async fn add_call(
    state: Data<AnalyticsState>,
    req: HttpRequest,
    path: Path<(String, String, String)>,
    multipart: Multipart,
) -> Result<HttpResponse, AnalyticsError> {
    let (company, organization, folder) = path.into_inner();
    // A token in the query or header is checked before the body is read; a form token after.
    let early = request_token(&req);
    if early.is_some() {
        authorize(&state, early.as_deref(), &company, Need::Write).await?;
    }
    let form = read_form(multipart, state.config.max_upload_bytes).await?;
    if early.is_none() {
        authorize(&state, form.token.as_deref(), &company, Need::Write).await?;
    }
    let Some(file) = &form.file else {
        return Err(AnalyticsError::BadRequest(
            "the file field is missing".into(),
        ));
    };
    if !is_transcript(&form, file) {
        return Err(AnalyticsError::Unsupported(
            "audio uploads are not supported yet: send a transcript JSON file".into(),
        ));
    }

    let org = store::get_organization(&state.db, &company, &organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&organization))?;
    let zone = parse_timezone(&org.timezone)?;
    let call_id = uuid::Uuid::new_v4().to_string();
    let request_id = uuid::Uuid::new_v4().to_string();
    let now = Utc::now();
    let last_modified = now.to_rfc3339_opts(SecondsFormat::Millis, true);
    let transcript = Transcript::parse(
        file,
        form.metadata.clone(),
        &Stamp {
            call_id: &call_id,
            request_id: &request_id,
            last_modified: &last_modified,
            upload_name: form.file_name.as_deref(),
            timezone: zone,
            now,
        },
    )?;
    let row = CallRow {
        id: call_id.clone(),
        company: company.clone(),
        organization: organization.clone(),
        folder: folder.clone(),
        request_id: request_id.clone(),
        datetime: transcript.datetime.clone(),
        last_modified,
        filename: transcript.filename.clone(),
        agent_id: transcript.agent_id.clone(),
        audio_seconds: transcript.audio_seconds,
    };

    // The object first: a committed row always has its transcript. A failed commit leaves an object no
    // row names, which is removed below.
    let key = row.transcript_key();
    let json = serde_json::to_vec(&transcript.json).map_err(AnalyticsError::internal)?;
    state.objects.put(&key, json).await?;
    let stored = store_call(&state, &row, &transcript).await;
    if stored.is_err() {
        if let Err(e) = state.objects.delete(&key).await {
            tracing::warn!(error = %e, %key, "could not remove the transcript of a call not stored");
        }
    }
    stored?;
    Ok(HttpResponse::Ok().json(Added {
        requestid: request_id,
        t_id: call_id,
    }))
}

/// The call's row, its configured metadata and its reindex message, in one transaction that holds the
/// folder, so a deletion that starts meanwhile either sees the call or refuses it.
async fn store_call(
    state: &AnalyticsState,
    row: &CallRow,
    transcript: &Transcript,
) -> Result<(), AnalyticsError> {
    let mut tx = state.db.begin().await?;
    let folder = store::get_folder(&mut tx, &row.company, &row.organization, &row.folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&row.folder))?;
    let settings = folder.usable_settings()?;
    store::insert_call(&mut tx, row).await?;
    for (field, value) in &transcript.metadata {
        if settings.configures(field) {
            store::set_metadata(&mut tx, &row.id, field, value).await?;
        }
    }
    announce::reindex_call(state, &mut tx, row).await?;
    announce::score_call(state, &mut tx, row).await?;
    tx.commit().await?;
    Ok(())
}
