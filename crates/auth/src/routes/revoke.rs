//! `POST /oauth/<company>/revoke` (RFC 7009). A client revokes its own tokens: a refresh token (and with
//! it the whole family and the access tokens issued with it) or an access token. Unknown tokens and
//! other clients' tokens are answered 200 and left alone, as the RFC asks.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::db::now_millis;
use common::secrets::hash_token;

use super::request::{CompanyPath, TokenReferenceForm};
use crate::client_auth::authenticate_client;
use crate::error::OAuthError;
use crate::form::Params;
use crate::state::AuthState;
use crate::storage;
use crate::verify::verify_access_token;

/// Token revocation (RFC 7009)
#[utoipa::path(post, path = "/oauth/{company}/revoke", tag = "oauth", params(CompanyPath),
    request_body(content = TokenReferenceForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("basic" = [])),
    responses(
        (status = 200, description = "Revoked, or unknown (nothing done)"),
        (status = 400, description = "RFC 6749 error", body = crate::error::Body),
        (status = 401, description = "Client authentication failed (invalid_client)", body = crate::error::Body)))]
pub async fn revoke(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, OAuthError> {
    super::request::require_form(&req)?;
    let params = Params::parse(&body)?;
    let client = authenticate_client(&state, &company, &req, &params).await?;
    let form: TokenReferenceForm = params.read()?;
    let now = now_millis();
    if let Some(record) = storage::get_refresh(&state.db, &hash_token(&form.token)).await? {
        if record.company == company.as_str() && record.client_id == client.client_id {
            storage::revoke_family(&state.db, &record.family_id, now).await?;
        }
    } else if let Ok(claims) = verify_access_token(&state, &company, &form.token).await {
        if claims.client_id == client.client_id {
            revocation::revoke(&state.db, &claims.jti, &company, claims.exp * 1000).await?;
        }
    }
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .finish())
}
