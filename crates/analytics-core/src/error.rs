//! The one error type of the analytics API. Every error is answered as `text/html` with the message as
//! its body (HTML-escaped, since messages quote what the caller sent), as the metadata endpoints require
//! and the rest of the API follows; docs/analytics-api.md lists the statuses. Store and adapter failures
//! are logged and answered with an opaque 500.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use common::db::StoreError;
use common::objects::ObjectError;
use common::search::SearchError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum AnalyticsError {
    /// No token, or one that is malformed, expired, revoked or not the platform's (401).
    #[error("{0}")]
    Unauthenticated(String),
    /// A valid token without the scope or the company the request needs (403).
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed; the message says what to change (400).
    #[error("{0}")]
    BadRequest(String),
    /// The target exists, or is being deleted (409).
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Unsupported(String),
    /// The service is too busy for this request now, for a reason the message gives the caller along
    /// with what to do (503 with `Retry-After`).
    #[error("{0}")]
    Busy(String),
    /// A dependency (the object store) cannot be reached for now: the caller may try again (503). The
    /// detail is logged, never sent.
    #[error("{0}")]
    Unavailable(String),
    /// Something the caller cannot fix; the message is logged, never sent.
    #[error("{0}")]
    Internal(String),
}

impl AnalyticsError {
    pub fn internal(e: impl std::fmt::Display) -> AnalyticsError {
        AnalyticsError::Internal(e.to_string())
    }

    /// The answer to a read of a company, organization or folder that does not exist (or no longer).
    pub fn scope_not_found(name: &str) -> AnalyticsError {
        AnalyticsError::NotFound(format!("Folder not found: {name}"))
    }

    /// A category path that application `app` does not have (in the case it has).
    pub fn category_not_found(path: &str, app: &str) -> AnalyticsError {
        AnalyticsError::NotFound(format!("Category not found: {path} of application {app}"))
    }

    /// A call that does not exist, or not in the path's company and organization.
    pub fn call_not_found(call: &str) -> AnalyticsError {
        AnalyticsError::NotFound(format!("Transcript not found: {call}"))
    }

    /// A call whose row names a transcript the object store does not have.
    pub fn transcript_missing(call: &str) -> AnalyticsError {
        AnalyticsError::internal(format!("the transcript of call {call} is missing"))
    }
}

impl From<StoreError> for AnalyticsError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(what) => {
                AnalyticsError::Conflict(format!("{what} already exists"))
            }
            StoreError::NotFound(what) => AnalyticsError::NotFound(format!("{what} not found")),
            other => AnalyticsError::internal(other),
        }
    }
}

impl From<ObjectError> for AnalyticsError {
    fn from(e: ObjectError) -> Self {
        match e {
            ObjectError::Service(_) | ObjectError::Refused(_) => {
                AnalyticsError::Unavailable(e.to_string())
            }
            other => AnalyticsError::internal(other),
        }
    }
}

impl From<analytics_store::Unusable> for AnalyticsError {
    fn from(e: analytics_store::Unusable) -> Self {
        match e {
            analytics_store::Unusable::Deleting(message) => AnalyticsError::Conflict(message),
            unreadable => AnalyticsError::internal(unreadable),
        }
    }
}

impl From<scoring::Invalid> for AnalyticsError {
    fn from(scoring::Invalid(message): scoring::Invalid) -> Self {
        AnalyticsError::BadRequest(message)
    }
}

impl From<SearchError> for AnalyticsError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Invalid(message) => AnalyticsError::BadRequest(message),
            other => AnalyticsError::internal(other),
        }
    }
}

/// What the server itself refuses (a body too slow, 408; a connection past the limit, 503), in this
/// API's format.
pub fn server_answer(status: StatusCode, message: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(escape_html(&message))
}

impl ResponseError for AnalyticsError {
    fn status_code(&self) -> StatusCode {
        match self {
            AnalyticsError::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            AnalyticsError::Forbidden(_) => StatusCode::FORBIDDEN,
            AnalyticsError::NotFound(_) => StatusCode::NOT_FOUND,
            AnalyticsError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AnalyticsError::Conflict(_) => StatusCode::CONFLICT,
            AnalyticsError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AnalyticsError::Unsupported(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AnalyticsError::Busy(_) | AnalyticsError::Unavailable(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            AnalyticsError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let message = match self {
            AnalyticsError::Internal(detail) => {
                tracing::error!(error = %detail, "analytics request failed");
                "Internal error".to_string()
            }
            AnalyticsError::Unavailable(detail) => {
                tracing::error!(error = %detail, "a dependency of analytics is unavailable");
                "Service unavailable, try again later".to_string()
            }
            other => other.to_string(),
        };
        let mut response = HttpResponse::build(self.status_code())
            .content_type("text/html; charset=utf-8")
            .body(escape_html(&message));
        if matches!(self, AnalyticsError::Unauthenticated(_)) {
            response.headers_mut().insert(
                actix_web::http::header::WWW_AUTHENTICATE,
                actix_web::http::header::HeaderValue::from_static("Bearer"),
            );
        }
        if matches!(self, AnalyticsError::Busy(_)) {
            response.headers_mut().insert(
                actix_web::http::header::RETRY_AFTER,
                actix_web::http::header::HeaderValue::from_static("1"),
            );
        }
        response
    }
}

/// The message as HTML text: what a caller sent can never become markup in a browser.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_escaped_and_internal_details_are_not_sent() {
        let e = AnalyticsError::BadRequest("unknown field <script>alert('x')</script>".into());
        let response = e.error_response();
        assert_eq!(response.status(), 400);
        assert_eq!(
            response.headers().get("content-type").unwrap(),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            escape_html("<b a=\"1\">&'"),
            "&lt;b a=&quot;1&quot;&gt;&amp;&#39;"
        );
        let internal = AnalyticsError::internal("password=hunter2 in connection string");
        let body = actix_web::body::to_bytes(internal.error_response().into_body());
        let body = futures_util::FutureExt::now_or_never(body)
            .unwrap()
            .unwrap();
        assert_eq!(&body[..], b"Internal error");
    }
}
