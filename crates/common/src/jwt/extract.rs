//! Actix extractor for a verified bearer token. Handlers take `Authenticated` and read the caller's
//! company and scopes from it; the verifier comes from the app's `web::Data<JwtVerifier>`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use actix_web::{web, FromRequest, HttpRequest};

use super::{AccessClaims, JwtVerifier, VerifyError};
use crate::{ApiError, ErrorCode};

/// The verified claims of the request's bearer token.
#[derive(Debug, Clone)]
pub struct Authenticated(pub Arc<AccessClaims>);

impl std::ops::Deref for Authenticated {
    type Target = AccessClaims;
    fn deref(&self) -> &AccessClaims {
        &self.0
    }
}

/// The token of an `Authorization: Bearer <token>` header.
pub fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let value = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

impl From<VerifyError> for ApiError {
    fn from(e: VerifyError) -> Self {
        match e {
            VerifyError::KeysUnavailable => ApiError::new(ErrorCode::Unavailable, e.to_string()),
            _ => ApiError::new(ErrorCode::InvalidToken, e.to_string()),
        }
    }
}

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let verifier = req.app_data::<web::Data<JwtVerifier>>().cloned();
        let token = bearer_token(req).map(str::to_string);
        Box::pin(async move {
            let verifier =
                verifier.ok_or_else(|| ApiError::internal("no JwtVerifier configured"))?;
            let token = token.ok_or_else(|| {
                ApiError::new(
                    ErrorCode::MissingToken,
                    "an Authorization: Bearer token is required",
                )
            })?;
            Ok(Authenticated(verifier.verify(&token).await?))
        })
    }
}
