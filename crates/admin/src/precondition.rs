//! ETags and `If-Match`: every record has a version, shown as a weak ETag, and a write to an existing
//! record must name the version it read, so that two administrators do not overwrite each other. The
//! header is read by the handler (after the body, which is refused on its own first) as `IfMatch`, the
//! type the document describes.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest};
use common::{ApiError, ErrorCode};
use serde::Deserialize;
use utoipa::IntoParams;

/// The ETag of a version: `W/"<version>"`.
pub fn etag(version: i64) -> String {
    format!("W/\"{version}\"")
}

/// The `If-Match` header of a write to an existing record, as sent (every field line, joined).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IfMatch {
    /// The ETag of the version read; a stale one is 412, none (or *) is 428. ETags separated by commas:
    /// at least one, none of them `*`.
    #[serde(rename = "If-Match")]
    #[param(
        min_length = 1,
        pattern = r"^(?!.*(?:^|,)\s*\*\s*(?:,|$))[\s,]*[^\s,]",
        example = r#"W/"3""#
    )]
    if_match: String,
}

/// Never fails: a missing or unusable header is answered by [`IfMatch::require`], after the body.
impl FromRequest for IfMatch {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let lines: Vec<&str> = req
            .headers()
            .get_all(header::IF_MATCH)
            .filter_map(|v| v.to_str().ok())
            .collect();
        ready(Ok(IfMatch {
            if_match: lines.join(","),
        }))
    }
}

impl IfMatch {
    /// The header must name the current version: 428 without an ETag (or with `*`), 412 when it names
    /// another version.
    pub fn require(&self, what: &str, current: i64) -> Result<(), ApiError> {
        let tags: Vec<&str> = self
            .if_match
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        // An empty If-Match names no version: the same as none.
        if tags.is_empty() {
            return Err(ApiError::new(
                ErrorCode::PreconditionRequired,
                format!("send If-Match with the ETag of the {what} you read (GET it first)"),
            ));
        }
        if tags.contains(&"*") {
            return Err(ApiError::new(
                ErrorCode::PreconditionRequired,
                "If-Match must name an ETag; * would overwrite blindly and is not accepted",
            ));
        }
        let matches = tags.iter().any(|t| {
            let t = t.strip_prefix("W/").unwrap_or(t);
            t.trim_matches('"').parse::<i64>().ok() == Some(current)
        });
        if matches {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "the {what} was changed since you read it (its ETag is now {}); read it again",
                    etag(current)
                ),
            ))
        }
    }
}
