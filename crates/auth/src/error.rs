//! Errors of the OAuth endpoints, answered as RFC 6749 section 5.2 JSON (`error`, `error_description`)
//! with the status the RFC gives: 401 and `WWW-Authenticate` for failed client authentication, 400 for
//! the rest, 500 for unexpected failures (logged, never described).

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OAuthErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope,
    InvalidToken,
    AccessDenied,
    UnsupportedResponseType,
    ServerError,
    TemporarilyUnavailable,
    /// OpenID Connect: `prompt=none` and no usable login session.
    LoginRequired,
}

impl OAuthErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthErrorCode::InvalidRequest => "invalid_request",
            OAuthErrorCode::InvalidClient => "invalid_client",
            OAuthErrorCode::InvalidGrant => "invalid_grant",
            OAuthErrorCode::UnauthorizedClient => "unauthorized_client",
            OAuthErrorCode::UnsupportedGrantType => "unsupported_grant_type",
            OAuthErrorCode::InvalidScope => "invalid_scope",
            OAuthErrorCode::InvalidToken => "invalid_token",
            OAuthErrorCode::AccessDenied => "access_denied",
            OAuthErrorCode::UnsupportedResponseType => "unsupported_response_type",
            OAuthErrorCode::ServerError => "server_error",
            OAuthErrorCode::TemporarilyUnavailable => "temporarily_unavailable",
            OAuthErrorCode::LoginRequired => "login_required",
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {description}", code.as_str())]
pub struct OAuthError {
    pub code: OAuthErrorCode,
    pub description: String,
    /// The realm of `WWW-Authenticate` for `invalid_client`.
    pub realm: Option<String>,
}

/// The RFC 6749 error body.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = OAuthError)]
pub struct Body<'a> {
    /// invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type,
    /// invalid_scope, invalid_token, login_required, server_error, ...
    error: &'a str,
    error_description: &'a str,
}

impl OAuthError {
    pub fn new(code: OAuthErrorCode, description: impl Into<String>) -> OAuthError {
        OAuthError {
            code,
            description: description.into(),
            realm: None,
        }
    }

    pub fn invalid_request(description: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthErrorCode::InvalidRequest, description)
    }

    pub fn invalid_grant(description: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthErrorCode::InvalidGrant, description)
    }

    pub fn invalid_client(realm: &str, description: impl Into<String>) -> OAuthError {
        OAuthError {
            code: OAuthErrorCode::InvalidClient,
            description: description.into(),
            realm: Some(realm.into()),
        }
    }

    pub fn server_error(cause: impl std::fmt::Display) -> OAuthError {
        tracing::error!(error = %cause, "token service failure");
        OAuthError::new(
            OAuthErrorCode::ServerError,
            "the server could not complete the request",
        )
    }
}

impl From<common::db::StoreError> for OAuthError {
    fn from(e: common::db::StoreError) -> Self {
        OAuthError::server_error(e)
    }
}

impl ResponseError for OAuthError {
    fn status_code(&self) -> StatusCode {
        match self.code {
            OAuthErrorCode::InvalidClient | OAuthErrorCode::InvalidToken => {
                StatusCode::UNAUTHORIZED
            }
            OAuthErrorCode::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
            OAuthErrorCode::TemporarilyUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        if !status.is_server_error() {
            tracing::warn!(error = self.code.as_str(), description = %self.description, "oauth request refused");
        }
        let mut response = HttpResponse::build(status);
        response
            .insert_header(("Cache-Control", "no-store"))
            .insert_header(("Pragma", "no-cache"));
        match self.code {
            OAuthErrorCode::InvalidClient => {
                // The realm names the company of the path; anything that is not a company name (CR/LF
                // and quotes included) would break the header, so it gets the generic realm.
                let realm = self
                    .realm
                    .as_deref()
                    .filter(|r| common::jwt::valid_company(r))
                    .unwrap_or("oauth");
                response.insert_header(("WWW-Authenticate", format!("Basic realm=\"{realm}\"")));
            }
            OAuthErrorCode::InvalidToken => {
                response.insert_header((
                    "WWW-Authenticate",
                    format!(
                        "Bearer error=\"invalid_token\", error_description=\"{}\"",
                        self.description
                            .chars()
                            .filter(|c| !c.is_control())
                            .collect::<String>()
                            .replace('"', "'")
                    ),
                ));
            }
            _ => {}
        }
        response.json(Body {
            error: self.code.as_str(),
            error_description: &self.description,
        })
    }
}
