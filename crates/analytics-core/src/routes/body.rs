//! The JSON bodies of the analytics API: read whole up to a limit, parsed strictly (a key given twice is
//! refused, a record is an object), every error answered as this API answers errors.

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;

use crate::error::AnalyticsError;

/// The largest JSON body of `/config`, `/metadata`, `/apps` and `/appmatches`.
pub const MAX_JSON_BYTES: usize = 1024 * 1024;

/// The answer to a body over [`MAX_JSON_BYTES`] (413).
pub fn body_too_large() -> AnalyticsError {
    AnalyticsError::TooLarge(format!("the body is larger than {MAX_JSON_BYTES} bytes"))
}

/// The body of a `/config`, `/metadata`, `/apps` or `/appmatches` request, read whole up to
/// [`MAX_JSON_BYTES`]: one declared or found larger is refused with [`body_too_large`], a body that
/// cannot be read with 400, as this API answers every error (text/html), never with the framework's own
/// plain-text answers.
pub struct Body(pub Bytes);

impl std::ops::Deref for Body {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl FromRequest for Body {
    type Error = AnalyticsError;
    type Future = LocalBoxFuture<'static, Result<Body, AnalyticsError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // The limit of the `PayloadConfig` of `configure`.
        let read = Bytes::from_request(req, payload);
        Box::pin(async move {
            read.await.map(Body).map_err(|e| {
                if e.as_response_error().status_code() == StatusCode::PAYLOAD_TOO_LARGE {
                    body_too_large()
                } else {
                    AnalyticsError::BadRequest(format!("the body could not be read: {e}"))
                }
            })
        })
    }
}

/// As `json_body`, for a body that is one JSON object (a record): serde would also read a struct from an
/// array of its fields in order, which no client means.
pub fn json_object_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AnalyticsError> {
    if !bytes.iter().all(u8::is_ascii_whitespace) && !common::http::is_json_object(bytes) {
        return Err(AnalyticsError::BadRequest(
            "invalid JSON body: it must be one JSON object {...}".into(),
        ));
    }
    json_body(bytes, None)
}

/// A JSON body, whatever its declared content type (`curl -d @file.json` sends a form type); a key given
/// twice is refused, a record is read from an object only (`common::object_only`), and errors name the
/// path of the offending value. An empty body is `empty`'s value when it has one.
pub fn json_body<T: DeserializeOwned>(bytes: &[u8], empty: Option<T>) -> Result<T, AnalyticsError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return empty
            .ok_or_else(|| AnalyticsError::BadRequest("the body is empty: send JSON".into()));
    }
    common::http::check_json(bytes)
        .map_err(|e| AnalyticsError::BadRequest(format!("invalid JSON body: {e}")))?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value =
        serde_path_to_error::deserialize(common::object_only::Objects(&mut de)).map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                AnalyticsError::BadRequest(format!("invalid JSON body: {}", e.inner()))
            } else {
                AnalyticsError::BadRequest(format!("invalid JSON body at {path}: {}", e.inner()))
            }
        })?;
    de.end()
        .map_err(|e| AnalyticsError::BadRequest(format!("invalid JSON body: {e}")))?;
    Ok(value)
}
