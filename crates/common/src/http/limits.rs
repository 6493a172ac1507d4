//! The limits of a service's HTTP server (docs/configuration.md, Limits of every service): how many
//! connections it serves at once, how many more it keeps for the operational endpoints, and how fast a
//! request body must arrive. The server answers the requests it refuses itself (408, 503) in the
//! service's own error format.

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

use crate::{ApiError, ErrorCode};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections past `max_connections` kept for `/healthz`, `/readyz` and `/metrics`.
    pub reserved_connections: usize,
    /// The time a body may take, plus a second for each `body_min_rate` bytes received.
    pub body_timeout: Duration,
    /// Bytes per second a body must keep up past `body_timeout`.
    pub body_min_rate: u64,
}

impl Default for HttpLimits {
    /// The compiled defaults of the settings.
    fn default() -> HttpLimits {
        crate::config::settings::CommonSettings::with_addr("127.0.0.1:0").http_limits()
    }
}

/// How a service answers an error its HTTP server raises before or beside the service's handlers: a
/// body too slow (408), a request on a connection past the limit (503). The message says what happened.
pub type ErrorAnswer = fn(StatusCode, String) -> HttpResponse;

/// [`ErrorAnswer`] in the platform's JSON error format (`ApiError`).
pub fn api_error_answer(status: StatusCode, message: String) -> HttpResponse {
    let code = match status {
        StatusCode::REQUEST_TIMEOUT => ErrorCode::BodyTimeout,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        _ => ErrorCode::Unavailable,
    };
    ApiError::new(code, message).error_response()
}
