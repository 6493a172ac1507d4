//! `GET/POST /oauth/<company>/userinfo` (OpenID Connect Core 5.3): the signed-in user's claims for an
//! access token issued with the `openid` scope.

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::jwt::bearer_token;

use super::request::CompanyPath;
use crate::error::{OAuthError, OAuthErrorCode};
use crate::issue::{user_claims, UserInfo};
use crate::scope;
use crate::standing;
use crate::state::AuthState;
use crate::verify::verify_access_token;

/// Claims of the signed-in user
///
/// For an access token issued with the openid scope.
#[utoipa::path(method(get, post), path = "/oauth/{company}/userinfo", tag = "oauth", params(CompanyPath),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "User claims", body = UserInfo),
        (status = 401, description = "Missing or invalid token (invalid_token)", body = crate::error::Body)))]
pub async fn userinfo(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
) -> Result<HttpResponse, OAuthError> {
    let invalid = |why: &str| OAuthError::new(OAuthErrorCode::InvalidToken, why);
    let token = bearer_token(&req).ok_or_else(|| invalid("a bearer access token is required"))?;
    let claims = verify_access_token(&state, &company, token)
        .await
        .map_err(|_| invalid("the access token is not valid"))?;
    if !claims.is_user_token() || !scope::includes(&claims.scope, scope::OPENID) {
        return Err(OAuthError::new(
            OAuthErrorCode::InvalidToken,
            "the token was not issued with the openid scope",
        ));
    }
    let user = directory::get_user_by_id(&state.db, &company, &claims.sub).await?;
    let user = match (standing::account_refusal(user.as_ref()), user) {
        (None, Some(user)) => user,
        (refusal, _) => return Err(invalid(refusal.unwrap_or("the user no longer exists"))),
    };
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(user_claims(&user, &claims.scope)))
}
