//! Who may do what: every analytics request carries an access token of the token service, as the `token`
//! query parameter (the form field `token` for uploads) or as an `Authorization: Bearer` header. The
//! common verifier checks it; a revoked token is refused; the token's company must be the path's
//! company, so one company's token never reaches another's data; reads need the `analytics:read` scope,
//! changes `analytics:write` (docs/analytics-api.md, Authentication).

use std::sync::Arc;

use actix_web::HttpRequest;
use common::jwt::{bearer_token, AccessClaims, VerifyError};

use crate::error::AnalyticsError;
use crate::state::AnalyticsState;

pub const READ_SCOPE: &str = "analytics:read";
pub const WRITE_SCOPE: &str = "analytics:write";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Read,
    Write,
}

impl Need {
    fn scope(self) -> &'static str {
        match self {
            Need::Read => READ_SCOPE,
            Need::Write => WRITE_SCOPE,
        }
    }
}

/// A caller allowed to act on one company's data.
#[derive(Debug, Clone)]
pub struct Access {
    pub claims: Arc<AccessClaims>,
}

/// The token of the request: the `token` query parameter, else the bearer header.
pub fn request_token(req: &HttpRequest) -> Option<String> {
    let from_query = url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(name, _)| name == "token")
        .map(|(_, value)| value.into_owned())
        .filter(|t| !t.is_empty());
    from_query.or_else(|| bearer_token(req).map(str::to_string))
}

/// Checks `token` for `need` on `company`'s data.
pub async fn authorize(
    state: &AnalyticsState,
    token: Option<&str>,
    company: &str,
    need: Need,
) -> Result<Access, AnalyticsError> {
    let claims = verified(state, token).await?;
    permit(claims, company, need)
}

/// Checks `token` for `need` on the data of the company it belongs to, for a request whose path names
/// no company (`POST /transcribe`, `GET /transcribe/<requestid>`).
pub async fn authorize_own(
    state: &AnalyticsState,
    token: Option<&str>,
    need: Need,
) -> Result<Access, AnalyticsError> {
    let claims = verified(state, token).await?;
    let company = claims.company.clone();
    permit(claims, &company, need)
}

/// The claims of a valid, unrevoked token of the platform.
async fn verified(
    state: &AnalyticsState,
    token: Option<&str>,
) -> Result<Arc<AccessClaims>, AnalyticsError> {
    let token = token.ok_or_else(|| {
        AnalyticsError::Unauthenticated(
            "an access token is required: pass it as the token query parameter".into(),
        )
    })?;
    let claims = state.verifier.verify(token).await.map_err(|e| match e {
        VerifyError::KeysUnavailable => AnalyticsError::internal(e),
        other => AnalyticsError::Unauthenticated(format!("invalid token: {other}")),
    })?;
    if revocation::is_token_revoked_cached(&state.db, &state.revocations, &(&*claims).into())
        .await?
    {
        return Err(AnalyticsError::Unauthenticated(
            "invalid token: the token has been revoked".into(),
        ));
    }
    Ok(claims)
}

fn permit(claims: Arc<AccessClaims>, company: &str, need: Need) -> Result<Access, AnalyticsError> {
    if claims.company != company {
        return Err(AnalyticsError::Forbidden(format!(
            "this token belongs to another company than {company}"
        )));
    }
    if !claims.has_scope(need.scope()) {
        return Err(AnalyticsError::Forbidden(format!(
            "this token lacks the {} scope",
            need.scope()
        )));
    }
    Ok(Access { claims })
}

/// `authorize` with the token of `req`.
pub async fn authorize_request(
    state: &AnalyticsState,
    req: &HttpRequest,
    company: &str,
    need: Need,
) -> Result<Access, AnalyticsError> {
    authorize(state, request_token(req).as_deref(), company, need).await
}
