//! Who may do what: every analytics request carries an access token of the token service, as the `token`
//! query parameter (the form field `token` for uploads) or as an `Authorization: Bearer` header. The
//! common verifier checks it; a revoked token is refused; the token's company must be the path's
//! company, so one company's token never reaches another's data; reads need the `analytics:read` scope,
//! changes `analytics:write` (docs/analytics-api.md, Authentication). A handler states what it needs in
//! its signature, `Authorized<Read>` or `Authorized<Write>`; the upload, whose token may come in its
//! form, checks with `authorize` itself. A read then waits for its company's turn (`admission`).

use std::marker::PhantomData;
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpRequest};
use common::jwt::{bearer_token, AccessClaims, VerifyError};
use futures_util::future::LocalBoxFuture;

use crate::admission::Admitted;
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

/// The permission a handler needs, as a type: `Authorized<Read>` or `Authorized<Write>` in its signature
/// checks the request's token for the company of the path (`{company}`) before the handler runs.
pub trait Permission {
    const NEED: Need;
}

/// Reading a company's data: the `analytics:read` scope.
pub struct Read;

/// Changing a company's data: the `analytics:write` scope.
pub struct Write;

impl Permission for Read {
    const NEED: Need = Need::Read;
}

impl Permission for Write {
    const NEED: Need = Need::Write;
}

/// A request whose token may act with permission `P` on the path's company. A read holds one of its
/// company's read slots while the handler runs (`crate::admission`).
pub struct Authorized<P> {
    pub access: Access,
    _admitted: Option<Admitted>,
    permission: PhantomData<P>,
}

impl<P: Permission> FromRequest for Authorized<P> {
    type Error = AnalyticsError;
    type Future = LocalBoxFuture<'static, Result<Self, AnalyticsError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<Data<AnalyticsState>>().cloned();
        let company = req.match_info().get("company").map(str::to_string);
        let token = request_token(req);
        Box::pin(async move {
            let state = state.ok_or_else(|| AnalyticsError::internal("no analytics state"))?;
            let company = company
                .ok_or_else(|| AnalyticsError::internal("an authorized route without {company}"))?;
            let access = authorize(&state, token.as_deref(), &company, P::NEED).await?;
            let admitted = match P::NEED {
                Need::Read => Some(state.reads.admit(&company).await?),
                Need::Write => None,
            };
            Ok(Authorized {
                access,
                _admitted: admitted,
                permission: PhantomData,
            })
        })
    }
}
