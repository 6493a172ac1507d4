//! What can go wrong on a console page, and the answer the browser gets: a redirect to sign in when the
//! session is missing or its token no longer works, the API's own error message with its status, a 403
//! for a form without its session's CSRF token, or an opaque 500 (the detail is logged).

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};

use crate::pages::layout;

#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// No session, or one whose token the API refused: sign in, then come back to `back_to`.
    #[error("sign-in needed")]
    SignIn { company: String, back_to: String },
    /// The API refused the request: its status and its message.
    #[error("{message}")]
    Api { status: u16, message: String },
    /// A form posted without the session's CSRF token.
    #[error("the form has expired: open the page again")]
    Forbidden,
    #[error("{0}")]
    BadRequest(String),
    #[error("internal error")]
    Internal(String),
}

impl ConsoleError {
    pub fn internal(error: impl std::fmt::Display) -> ConsoleError {
        ConsoleError::Internal(error.to_string())
    }
}

impl From<common::db::StoreError> for ConsoleError {
    fn from(error: common::db::StoreError) -> Self {
        ConsoleError::internal(error)
    }
}

impl ResponseError for ConsoleError {
    fn status_code(&self) -> StatusCode {
        match self {
            ConsoleError::SignIn { .. } => StatusCode::SEE_OTHER,
            ConsoleError::Api { status, .. } => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_GATEWAY)
            }
            ConsoleError::Forbidden => StatusCode::FORBIDDEN,
            ConsoleError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ConsoleError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            ConsoleError::SignIn { company, back_to } => {
                let query = serde_urlencoded::to_string([("back_to", back_to)]).unwrap_or_default();
                HttpResponse::SeeOther()
                    .insert_header((
                        header::LOCATION,
                        format!("/console/{company}/signin?{query}"),
                    ))
                    .finish()
            }
            ConsoleError::Internal(detail) => {
                tracing::error!(error = %detail, "console page failed");
                layout::error_page(self.status_code(), "Something went wrong on our side.")
            }
            other => layout::error_page(self.status_code(), &other.to_string()),
        }
    }
}
