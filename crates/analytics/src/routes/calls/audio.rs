//! `GET /calls/<company>/<organization>/<tId>/audio`: the recording a call was transcribed from, with
//! the type its extension names and a single byte range when one is asked (`range`), so a browser can
//! play and seek it. A call added as a transcript has none (404).

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};

use super::range::{asked, Asked};
use super::{audio_key, find};
use crate::access::{Authorized, Read};
use crate::error::{server_answer, AnalyticsError};
use crate::routes::paths::CallPath;
use crate::state::AnalyticsState;

/// A call's recording
///
/// The recording a call was transcribed from, as it was uploaded. A `Range` header of one byte range
/// gets 206 with that part.
#[utoipa::path(get, path = "/calls/{company}/{organization}/{tId}/audio", tag = "calls",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path)),
    responses((status = 200, description = "The recording, with the type its file name names"),
        (status = 206, description = "The part of the recording the Range header asked for"),
        (status = 404, description = "Transcript not found: <tId>, or Audio not found: <tId> (text/html)"),
        (status = 416, description = "The range starts past the recording's end")))]
pub async fn audio(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<CallPath>,
    request: HttpRequest,
) -> Result<HttpResponse, AnalyticsError> {
    let row = find(&state, path.into_inner()).await?.row;
    let no_audio = || {
        AnalyticsError::NotFound(format!(
            "Audio not found: {} (the call was added as a transcript)",
            row.id
        ))
    };
    let key = audio_key(state.objects.as_ref(), &row)
        .await?
        .ok_or_else(no_audio)?;
    let bytes = state.objects.get(&key).await?.ok_or_else(no_audio)?;
    let len = bytes.len() as u64;
    let range = request
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok());
    let media = media_type(&key);
    Ok(match asked(range, len) {
        Asked::Whole => playable(HttpResponse::Ok(), media).body(bytes),
        Asked::Part { start, end } => playable(HttpResponse::PartialContent(), media)
            .insert_header((header::CONTENT_RANGE, format!("bytes {start}-{end}/{len}")))
            .body(bytes[start as usize..=end as usize].to_vec()),
        Asked::Unsatisfiable => {
            let mut answer = server_answer(
                StatusCode::RANGE_NOT_SATISFIABLE,
                format!("The range starts past the recording's {len} bytes"),
            );
            let whole = HeaderValue::from_str(&format!("bytes */{len}"))
                .map_err(AnalyticsError::internal)?;
            answer.headers_mut().insert(header::CONTENT_RANGE, whole);
            answer
        }
    })
}

/// `answer` with the headers of every recording: its type, never sniffed; ranges served; a file of no
/// known audio type a download, never shown.
fn playable(mut answer: HttpResponseBuilder, media: &str) -> HttpResponseBuilder {
    let disposition = if media.starts_with("audio/") {
        "inline"
    } else {
        "attachment"
    };
    answer
        .content_type(media)
        .insert_header((header::ACCEPT_RANGES, "bytes"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_DISPOSITION, disposition))
        .insert_header((header::CACHE_CONTROL, "private, no-store"));
    answer
}

/// The media type of a recording by its key's extension (the decoder read its content; browsers need
/// the type to play it).
fn media_type(key: &str) -> &'static str {
    match key.rsplit_once('.').map(|(_, ext)| ext) {
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        Some("flac") => "audio/flac",
        Some("ogg" | "oga" | "opus") => "audio/ogg",
        Some("m4a" | "mp4" | "aac") => "audio/mp4",
        Some("webm") => "audio/webm",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_extensions_play_and_others_download() {
        assert_eq!(media_type("a/b/c/t1/audio.wav"), "audio/wav");
        assert_eq!(media_type("a/b/c/t1/audio.mp3"), "audio/mpeg");
        assert_eq!(media_type("a/b/c/t1/audio.bin"), "application/octet-stream");
        assert_eq!(
            media_type("a/b/c/t1/audio.html"),
            "application/octet-stream"
        );
    }
}
