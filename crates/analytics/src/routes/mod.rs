//! The analytics API's routes: one module per resource (docs/analytics-api.md). Each handler checks the
//! token against the path's company first (`access`), then reads its body.

pub mod appmatches;
pub mod apps;
pub mod appstats;
pub mod callback_secret;
pub mod config;
pub mod metadata;
pub mod search;
pub mod stats;
pub mod transcribe;

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
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

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PayloadConfig::new(MAX_JSON_BYTES))
        .service(
            web::resource("/config/{company}")
                .route(web::get().to(config::get_company))
                .route(web::post().to(config::create_company))
                .route(web::put().to(config::replace_company))
                .route(web::delete().to(config::delete_company)),
        )
        .service(
            web::resource("/config/{company}/{organization}")
                .route(web::get().to(config::get_organization))
                .route(web::post().to(config::create_organization))
                .route(web::put().to(config::replace_organization))
                .route(web::delete().to(config::delete_organization)),
        )
        .service(
            web::resource("/config/{company}/{organization}/{folder}")
                .route(web::get().to(config::get_folder))
                .route(web::post().to(config::create_folder))
                .route(web::put().to(config::replace_folder))
                .route(web::delete().to(config::delete_folder)),
        )
        .service(
            web::resource("/transcribe/{company}/{organization}/{folder}")
                .route(web::post().to(transcribe::folder::add_call)),
        )
        .service(web::resource("/transcribe").route(web::post().to(transcribe::direct::transcribe)))
        .service(
            web::resource("/transcribe/{requestid}")
                .route(web::get().to(transcribe::progress::progress)),
        )
        .service(
            web::resource("/transcribe/{requestid}/result")
                .route(web::get().to(transcribe::progress::result)),
        )
        .service(
            web::resource("/callbacks/{company}/secret")
                .route(web::get().to(callback_secret::get_secret))
                .route(web::post().to(callback_secret::rotate_secret)),
        )
        .service(
            web::resource("/metadata/{company}/{organization}/{call}")
                .route(web::patch().to(metadata::patch))
                .route(web::delete().to(metadata::delete)),
        )
        .service(
            web::resource("/apps/{company}/{app}")
                .route(web::get().to(apps::get_app))
                .route(web::put().to(apps::put_app))
                .route(web::delete().to(apps::delete_app)),
        )
        .service(
            web::resource("/appmatches/{company}/{organization}/{call}")
                .route(web::get().to(appmatches::app_matches)),
        )
        .service(
            web::resource("/search/{company}/{organization}").route(web::get().to(search::search)),
        )
        .service(
            web::resource("/search/{company}/{organization}/{folder}")
                .route(web::get().to(search::search_folder)),
        )
        .service(
            web::resource("/appstats/{company}/{organization}/{app}")
                .route(web::get().to(appstats::appstats)),
        )
        .service(
            web::resource("/appstats/{company}/{organization}/{app}/{folder}")
                .route(web::get().to(appstats::appstats_folder)),
        )
        .service(
            web::resource("/stats/{company}/{organization}").route(web::get().to(stats::stats)),
        )
        .service(
            web::resource("/stats/{company}/{organization}/{folder}")
                .route(web::get().to(stats::stats_folder)),
        );
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
