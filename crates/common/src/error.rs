//! One error model for the JSON APIs: a table of stable error codes, each with its HTTP status and type.
//! Clients match on `code`, never on `message`. Unexpected failures become an opaque `internal` error
//! whose cause is logged, never returned. (The OAuth endpoints answer in RFC 6749 form instead; see the
//! auth crate.)

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

/// Kind of an error, as reported in the `type` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    InvalidRequest,
    Auth,
    NotFound,
    Conflict,
    RateLimit,
    Internal,
}

macro_rules! error_codes {
    ($($variant:ident => ($code:literal, $status:ident, $kind:ident)),* $(,)?) => {
        /// The stable error codes of the platform.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode { $($variant),* }

        impl ErrorCode {
            /// Every code, for documentation and tests.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code),* }
            }

            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::$status),* }
            }

            pub fn error_type(self) -> ErrorType {
                match self { $(ErrorCode::$variant => ErrorType::$kind),* }
            }
        }
    };
}

error_codes! {
    BadRequest => ("bad_request", BAD_REQUEST, InvalidRequest),
    InvalidField => ("invalid_field", BAD_REQUEST, InvalidRequest),
    InvalidLimit => ("invalid_limit", BAD_REQUEST, InvalidRequest),
    InvalidCursor => ("invalid_cursor", BAD_REQUEST, InvalidRequest),
    PayloadTooLarge => ("payload_too_large", PAYLOAD_TOO_LARGE, InvalidRequest),
    BodyTimeout => ("body_timeout", REQUEST_TIMEOUT, InvalidRequest),
    MethodNotAllowed => ("method_not_allowed", METHOD_NOT_ALLOWED, InvalidRequest),
    MissingToken => ("missing_token", UNAUTHORIZED, Auth),
    InvalidToken => ("invalid_token", UNAUTHORIZED, Auth),
    Forbidden => ("forbidden", FORBIDDEN, Auth),
    ApiAccessDisabled => ("api_access_disabled", FORBIDDEN, Auth),
    NotFound => ("not_found", NOT_FOUND, NotFound),
    AlreadyExists => ("already_exists", CONFLICT, Conflict),
    PreconditionFailed => ("precondition_failed", PRECONDITION_FAILED, Conflict),
    PreconditionRequired => ("precondition_required", PRECONDITION_REQUIRED, Conflict),
    InUse => ("in_use", CONFLICT, Conflict),
    RateLimited => ("rate_limited", TOO_MANY_REQUESTS, RateLimit),
    DailyLimitReached => ("daily_limit_reached", TOO_MANY_REQUESTS, RateLimit),
    Timeout => ("request_timeout", SERVICE_UNAVAILABLE, Internal),
    Unavailable => ("unavailable", SERVICE_UNAVAILABLE, Internal),
    Internal => ("internal", INTERNAL_SERVER_ERROR, Internal),
}

/// An error answered to an API caller.
#[derive(Debug, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    /// The request field the error is about, when there is one.
    pub field: Option<String>,
    /// Seconds after which a retry may succeed (sent as `Retry-After`).
    pub retry_after: Option<u64>,
}

/// The platform's JSON error body; clients match on `code`, never on `message`.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody<'a> {
    /// Stable error code, e.g. `invalid_field`.
    code: &'a str,
    #[serde(rename = "type")]
    kind: ErrorType,
    message: &'a str,
    /// The request field or query parameter the error is about, e.g. `roles.extra_roles[1]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            field: None,
            retry_after: None,
        }
    }

    /// A validation error about one field; the message should say what is expected.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        ApiError {
            code: ErrorCode::InvalidField,
            message: message.into(),
            field: Some(field),
            retry_after: None,
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::NotFound, what)
    }

    /// An unexpected failure: the cause is logged here and the caller sees only an opaque message.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        ApiError::new(ErrorCode::Internal, "internal error")
    }

    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code.status()
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        if status.is_server_error() {
            tracing::error!(code = self.code.as_str(), message = %self.message, "request failed");
        } else {
            tracing::warn!(code = self.code.as_str(), message = %self.message, "request refused");
        }
        let mut response = HttpResponse::build(status);
        if let Some(seconds) = self.retry_after {
            response.insert_header(("Retry-After", seconds.to_string()));
        }
        if self.code == ErrorCode::MissingToken || self.code == ErrorCode::InvalidToken {
            let value = if self.code == ErrorCode::InvalidToken {
                "Bearer error=\"invalid_token\""
            } else {
                "Bearer"
            };
            response.insert_header(("WWW-Authenticate", value));
        }
        response.json(ErrorBody {
            code: self.code.as_str(),
            kind: self.code.error_type(),
            message: &self.message,
            field: self.field.as_deref(),
        })
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        ApiError::internal(e)
    }
}

impl From<crate::db::StoreError> for ApiError {
    fn from(e: crate::db::StoreError) -> Self {
        match e {
            crate::db::StoreError::Conflict(what) => {
                ApiError::new(ErrorCode::AlreadyExists, format!("{what} already exists"))
            }
            crate::db::StoreError::NotFound(what) => ApiError::not_found(what),
            crate::db::StoreError::Stale => ApiError::new(
                ErrorCode::PreconditionFailed,
                "the resource was changed by someone else",
            ),
            crate::db::StoreError::InUse(what) => ApiError::new(ErrorCode::InUse, what),
            crate::db::StoreError::Database(e) => ApiError::internal(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_statuses_are_errors() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(
                seen.insert(code.as_str()),
                "duplicate code {}",
                code.as_str()
            );
            assert!(code.status().is_client_error() || code.status().is_server_error());
        }
    }
}
