//! `GET /calls/<company>/<organization>/<tId>/audio`: the recording a call was transcribed from, with
//! the type its extension names and a single byte range when one is asked (`range`), so a browser can
//! play and seek it; read from the object store and sent a part at a time. A call added as a transcript
//! has none (404).

use std::ops::Range;
use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use common::objects::ObjectStore;
use futures_util::Stream;

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
    let len = state.objects.size(&key).await?.ok_or_else(no_audio)?;
    let range = request
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok());
    let media = media_type(&key);
    let objects = state.objects.clone();
    Ok(match asked(range, len) {
        Asked::Whole => playable(HttpResponse::Ok(), media)
            .no_chunking(len)
            .streaming(parts(objects, key, 0..len)),
        Asked::Part { start, end } => playable(HttpResponse::PartialContent(), media)
            .insert_header((header::CONTENT_RANGE, format!("bytes {start}-{end}/{len}")))
            .no_chunking(end + 1 - start)
            .streaming(parts(objects, key, start..end + 1)),
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

/// The most of a recording one answer holds in memory at a time: it is read and sent a part at a time,
/// so a burst of requests for long recordings costs parts, not recordings.
const PART: u64 = 256 * 1024;

/// The bytes `range` of the object under `key`, read a part at a time as the answer is sent. An object
/// removed or cut short meanwhile ends the answer with an error (the client sees it cut short).
fn parts(
    objects: Arc<dyn ObjectStore>,
    key: String,
    range: Range<u64>,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::try_unfold(range.start, move |at| {
        let (objects, key) = (objects.clone(), key.clone());
        async move {
            if at >= range.end {
                return Ok(None);
            }
            let part = objects
                .get_range(&key, at..(at + PART).min(range.end))
                .await
                .map_err(std::io::Error::other)?
                .filter(|part| !part.is_empty())
                .ok_or_else(|| std::io::Error::other(format!("{key} changed while it was read")))?;
            let next = at + part.len() as u64;
            Ok(Some((Bytes::from(part), next)))
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
    use common::objects::{Listed, ObjectError, Version};
    use futures_util::TryStreamExt;
    use std::sync::Mutex;

    /// One object, read in parts only; the largest part asked is kept.
    struct Recording {
        bytes: Vec<u8>,
        largest: Mutex<u64>,
    }

    #[async_trait::async_trait]
    impl ObjectStore for Recording {
        async fn size(&self, _: &str) -> Result<Option<u64>, ObjectError> {
            Ok(Some(self.bytes.len() as u64))
        }
        async fn get_range(
            &self,
            _: &str,
            range: Range<u64>,
        ) -> Result<Option<Vec<u8>>, ObjectError> {
            let mut largest = self.largest.lock().unwrap();
            *largest = (*largest).max(range.end - range.start);
            let end = (range.end as usize).min(self.bytes.len());
            Ok(Some(self.bytes[range.start as usize..end].to_vec()))
        }
        async fn get(&self, _: &str) -> Result<Option<Vec<u8>>, ObjectError> {
            panic!("a recording is never read whole")
        }
        async fn get_versioned(&self, _: &str) -> Result<Option<(Vec<u8>, Version)>, ObjectError> {
            panic!("a recording is never read whole")
        }
        async fn put(&self, _: &str, _: Vec<u8>) -> Result<(), ObjectError> {
            unreachable!()
        }
        async fn put_if(&self, _: &str, _: Vec<u8>, _: &Version) -> Result<bool, ObjectError> {
            unreachable!()
        }
        async fn delete(&self, _: &str) -> Result<(), ObjectError> {
            unreachable!()
        }
        async fn list_written(
            &self,
            _: &str,
            _: Option<&str>,
            _: usize,
        ) -> Result<Vec<Listed>, ObjectError> {
            unreachable!()
        }
    }

    #[tokio::test]
    async fn a_recording_is_sent_a_part_at_a_time() {
        let recording = Arc::new(Recording {
            bytes: (0..=255u8).cycle().take(1_000_000).collect(),
            largest: Mutex::new(0),
        });
        let sent: Vec<Bytes> = parts(recording.clone(), "k".into(), 10..900_000)
            .try_collect()
            .await
            .unwrap();
        assert_eq!(sent.concat(), recording.bytes[10..900_000]);
        assert_eq!(sent.len(), 4, "{} bytes in parts of {PART}", 900_000 - 10);
        assert_eq!(*recording.largest.lock().unwrap(), PART);
    }

    #[tokio::test]
    async fn a_recording_cut_short_while_sent_ends_the_answer_with_an_error() {
        let recording = Arc::new(Recording {
            bytes: vec![7; 1000],
            largest: Mutex::new(0),
        });
        let sent: Result<Vec<Bytes>, _> = parts(recording, "k".into(), 0..2000).try_collect().await;
        assert!(sent.is_err());
    }

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
