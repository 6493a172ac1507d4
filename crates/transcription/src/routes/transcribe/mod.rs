//! `/transcribe` (docs/transcription.md, docs/analytics-api.md, Adding calls): recordings to transcribe,
//! returned to the caller (`direct`) or added to a folder as calls (`folder`, which also takes
//! transcript JSON files as they are), and the progress and result of a request (`progress`). Both
//! uploads are multipart forms read by `read_form`.

pub mod direct;
pub mod folder;
pub mod form_schema;
pub mod progress;
mod raw;

use std::sync::atomic::{AtomicUsize, Ordering};

use actix_multipart::Multipart;
use actix_web::http::header;
use actix_web::{web, HttpRequest};
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::state::TranscriptionState;
use analytics_core::access::{authorize, authorize_own, request_token, Access, Need};
use analytics_core::error::AnalyticsError;
use raw::{FormBody, Progress, FORM_OVERHEAD};
use speech::output::{Output, UnknownFormat};

/// The bytes of file fields being read, by all the uploads of the process, before any token of their
/// request was checked (the form's `token` field comes after the file): such an upload is held in memory
/// before anyone knows whether it may be sent, so a few at once, up to [`unchecked_budget`] bytes in
/// all, are read; past that, one more is refused (503) until they are done. An upload whose token comes
/// first (in the query, the header, or a form field before the file) is checked before its file is
/// read and is never refused for this.
static UNCHECKED_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Twice the largest upload: two of the largest, or many small ones, at once.
fn unchecked_budget(limit: usize) -> usize {
    limit.saturating_mul(2)
}

/// A request's share of [`UNCHECKED_BYTES`], given back when its token has been checked (or it fails).
#[derive(Default)]
pub(crate) struct Unchecked {
    held: usize,
}

impl Unchecked {
    /// Counts `bytes` more of the request's file against `budget`; false when they do not fit.
    fn hold(&mut self, bytes: usize, budget: usize) -> bool {
        let fits = UNCHECKED_BYTES
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes).filter(|&total| total <= budget)
            })
            .is_ok();
        if fits {
            self.held += bytes;
        }
        fits
    }
}

impl Drop for Unchecked {
    fn drop(&mut self) {
        UNCHECKED_BYTES.fetch_sub(self.held, Ordering::Relaxed);
    }
}

/// The parts of an upload form.
#[derive(Default)]
pub(crate) struct Form {
    pub token: Option<String>,
    pub file: Option<Vec<u8>>,
    pub file_name: Option<String>,
    pub file_type: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub output: Option<String>,
    pub callback: Option<String>,
    pub diarize: Option<String>,
    pub attempts: Option<String>,
    /// The file's bytes counted in [`UNCHECKED_BYTES`] until the form's token is checked.
    unchecked: Unchecked,
}

const TEXT_FIELD_LIMIT: usize = 64 * 1024;

/// The form fields an upload may carry.
const FIELDS: &str = "token, file, output, callback, diarize, attempts and metadata";

/// Reads the form. `access` is the caller's checked access when the token came in the query or header;
/// otherwise a `token` field given before the file is checked as the file starts, so a refused token
/// costs no upload (a token after the file can only be checked once the file is read, within the
/// budget of [`UNCHECKED_BYTES`]).
async fn read_form(
    state: &TranscriptionState,
    owner: &Owner<'_>,
    access: &mut Option<Access>,
    mut multipart: Multipart,
    progress: Progress,
    limit: usize,
) -> Result<Form, AnalyticsError> {
    let mut form = Form::default();
    let mut total = 0usize;
    let invalid = |e: actix_multipart::MultipartError| {
        if progress.overrun() {
            AnalyticsError::TooLarge(format!(
                "the form holds more than {FORM_OVERHEAD} bytes besides its fields' contents"
            ))
        } else {
            AnalyticsError::BadRequest(format!("invalid multipart body: {e}"))
        }
    };
    while let Some(field) = multipart.next().await {
        let mut field = field.map_err(invalid)?;
        let name = field.name().unwrap_or_default().to_string();
        let is_file = name == "file";
        if is_file && access.is_none() && form.token.is_some() {
            *access = Some(check_write(state, form.token.as_deref(), owner).await?);
        }
        if is_file {
            form.file_name = field
                .content_disposition()
                .and_then(|d| d.get_filename())
                .map(str::to_string);
            form.file_type = field.content_type().map(|m| m.essence_str().to_string());
        }
        let cap = if is_file { limit } else { TEXT_FIELD_LIMIT };
        let unchecked = is_file && access.is_none();
        let mut bytes = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk.map_err(invalid)?;
            total += chunk.len();
            progress.delivered(chunk.len());
            if bytes.len() + chunk.len() > cap || total > limit + TEXT_FIELD_LIMIT {
                return Err(AnalyticsError::TooLarge(format!(
                    "the {name} field is larger than {cap} bytes"
                )));
            }
            if unchecked && !form.unchecked.hold(chunk.len(), unchecked_budget(limit)) {
                return Err(AnalyticsError::Busy(
                    "too many uploads whose token comes after the file are being read; send the \
                     token first (the token field before the file field, or in the query) or try \
                     again in a moment"
                        .into(),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        let repeated = || AnalyticsError::BadRequest(format!("the {name} field is given twice"));
        let text = || {
            String::from_utf8(bytes.clone()).map_err(|_| {
                AnalyticsError::BadRequest(format!("the {name} field is not UTF-8 text"))
            })
        };
        let slot = match name.as_str() {
            "file" if form.file.is_some() => return Err(repeated()),
            "file" => {
                form.file = Some(bytes);
                continue;
            }
            "metadata" if form.metadata.is_some() => return Err(repeated()),
            "metadata" => {
                form.metadata = Some(analytics_core::routes::body::json_body(
                    text()?.as_bytes(),
                    None,
                )?);
                continue;
            }
            "token" => &mut form.token,
            "output" => &mut form.output,
            "callback" => &mut form.callback,
            "diarize" => &mut form.diarize,
            "attempts" => &mut form.attempts,
            other => {
                return Err(AnalyticsError::BadRequest(format!(
                    "unknown form field {other:?}: expected {FIELDS}"
                )))
            }
        };
        if slot.is_some() {
            return Err(repeated());
        }
        *slot = Some(text()?.trim().to_string());
    }
    Ok(form)
}

/// Whose data an upload goes to: the path's company, or the token's own (`POST /transcribe`).
pub(crate) enum Owner<'a> {
    Path(&'a str),
    Token,
}

async fn check_write(
    state: &TranscriptionState,
    token: Option<&str>,
    owner: &Owner<'_>,
) -> Result<Access, AnalyticsError> {
    match owner {
        Owner::Path(company) => authorize(state, token, company, Need::Write).await,
        Owner::Token => authorize_own(state, token, Need::Write).await,
    }
}

/// Checks the write scope and reads the upload form, with its file. A token in the query or header, or a
/// `token` field before the `file` field, is checked before the file is read, so a caller without rights
/// costs no upload; a form token after the file is checked once the form is read.
pub(crate) async fn read_authorized_form(
    state: &TranscriptionState,
    req: &HttpRequest,
    payload: web::Payload,
    owner: Owner<'_>,
) -> Result<(Form, Vec<u8>, Access), AnalyticsError> {
    let mut early = match request_token(req) {
        Some(token) => Some(check_write(state, Some(&token), &owner).await?),
        None => None,
    };
    let limit = state.config.max_upload_bytes;
    let most = limit + TEXT_FIELD_LIMIT + FORM_OVERHEAD;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > most as u64) {
        return Err(AnalyticsError::TooLarge(format!(
            "the form is larger than {most} bytes, the upload limit and its other fields"
        )));
    }
    let progress = Progress::default();
    let body = FormBody::new(payload, progress.clone());
    let multipart = Multipart::new(req.headers(), body);
    let mut form = read_form(state, &owner, &mut early, multipart, progress, limit).await?;
    let access = match early {
        Some(access) => access,
        None => check_write(state, form.token.as_deref(), &owner).await?,
    };
    // Checked: the file is now an upload like any other.
    form.unchecked = Unchecked::default();
    let file = form
        .file
        .take()
        .ok_or_else(|| AnalyticsError::BadRequest("the file field is missing".into()))?;
    Ok((form, file, access))
}

/// What a form asks of a transcription, checked.
pub(crate) struct Asked {
    pub output: Output,
    pub diarize: bool,
    /// The callback address, checked against the address guard, and its attempts.
    pub callback: Option<(String, u32)>,
}

impl Form {
    /// Checks `output`, `diarize`, `callback` and `attempts`; `default_callback` is the folder's.
    pub(crate) async fn asked(
        &self,
        state: &TranscriptionState,
        default_callback: Option<(String, Option<u32>)>,
    ) -> Result<Asked, AnalyticsError> {
        let output = match self.output.as_deref().filter(|o| !o.is_empty()) {
            None => Output::Json,
            Some(text) => text
                .parse()
                .map_err(|e: UnknownFormat| AnalyticsError::BadRequest(e.to_string()))?,
        };
        let diarize = match self
            .diarize
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("") | Some("false") | Some("0") | Some("no") => false,
            Some("true") | Some("1") | Some("yes") => true,
            Some(other) => {
                return Err(AnalyticsError::BadRequest(format!(
                    "diarize must be true or false, got {other:?}"
                )))
            }
        };
        let attempts = match self.attempts.as_deref().filter(|a| !a.is_empty()) {
            None => None,
            Some(text) => match text.parse::<u32>() {
                Ok(n) if (1..=1000).contains(&n) => Some(n),
                _ => {
                    return Err(AnalyticsError::BadRequest(format!(
                        "attempts must be a whole number from 1 to 1000, got {text:?}"
                    )))
                }
            },
        };
        let (url, folder_attempts) = match self.callback.as_deref().filter(|c| !c.is_empty()) {
            Some(url) => (Some(url.to_string()), None),
            None => match default_callback {
                Some((url, attempts)) => (Some(url), attempts),
                None => (None, None),
            },
        };
        if attempts.is_some() && url.is_none() {
            return Err(AnalyticsError::BadRequest(
                "attempts applies to a callback: give callback too".into(),
            ));
        }
        let callback = match url {
            None => None,
            Some(url) => {
                let checked = state
                    .callbacks
                    .policy
                    .check_url(&url)
                    .await
                    .map_err(|refused| AnalyticsError::BadRequest(refused.to_string()))?;
                let attempts = attempts
                    .or(folder_attempts)
                    .unwrap_or(state.callbacks.schedule.max_attempts);
                Some((checked.to_string(), attempts))
            }
        };
        Ok(Asked {
            output,
            diarize,
            callback,
        })
    }
}
