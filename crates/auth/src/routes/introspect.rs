//! `POST /oauth/<company>/introspect` (RFC 7662). Any authenticated confidential client of the company may
//! ask about the company's access tokens (a resource server checks tokens presented to it); a refresh
//! token is described only to the client it was issued to. A user token is active only while its user
//! exists and may sign in. Anything else is simply `{"active": false}`.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::db::now_millis;
use common::secrets::hash_token;
use serde::Serialize;
use utoipa::ToSchema;

use super::request::{CompanyPath, TokenReferenceForm};
use crate::client_auth::authenticate_client;
use crate::error::OAuthError;
use crate::form::Params;
use crate::state::AuthState;
use crate::storage;
use crate::verify::{self, verify_access_token};

/// RFC 7662 introspection: `{"active": false}` for tokens that are unknown, expired, revoked or not the
/// caller's; the other fields only for active tokens.
#[derive(Default, Serialize, ToSchema)]
pub struct Introspection {
    active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    company: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iat: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iss: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jti: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub: Option<String>,
    /// `Bearer` or `refresh_token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    token_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<String>,
}

fn respond(body: Introspection) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(body)
}

/// Token introspection (RFC 7662)
#[utoipa::path(post, path = "/oauth/{company}/introspect", tag = "oauth", params(CompanyPath),
    request_body(content = TokenReferenceForm, content_type = "application/x-www-form-urlencoded"),
    security(("basic" = []), ()),
    responses(
        (status = 200, description = "Introspection response ({\"active\": false} for unknown tokens)", body = Introspection),
        (status = 400, description = "RFC 6749 error", body = crate::error::Body),
        (status = 401, description = "Client authentication failed (invalid_client)", body = crate::error::Body)))]
pub async fn introspect(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, OAuthError> {
    super::request::require_form(&req)?;
    let params = Params::parse(&body)?;
    let client = authenticate_client(&state, &company, &req, &params).await?;
    if client.is_public() {
        return Err(OAuthError::invalid_client(
            &company,
            "a public client cannot introspect tokens",
        ));
    }
    let form: TokenReferenceForm = params.read()?;
    let token = form.token.as_str();
    let inactive = || respond(Introspection::default());
    if form.token_type_hint.as_deref() != Some("refresh_token") {
        if let Ok(claims) = verify_access_token(&state, &company, token).await {
            if claims.is_user_token() {
                let user = directory::get_user_by_id(&state.db, &company, &claims.sub).await?;
                if !user.is_some_and(|u| u.can_log_in()) {
                    return Ok(inactive());
                }
            }
            return Ok(respond(Introspection {
                active: true,
                aud: Some(claims.aud),
                client_id: Some(claims.client_id),
                company: Some(claims.company),
                exp: Some(claims.exp),
                iat: Some(claims.iat),
                iss: Some(claims.iss),
                jti: Some(claims.jti),
                scope: Some(claims.scope),
                sub: Some(claims.sub),
                token_type: Some("Bearer"),
                username: claims.username,
            }));
        }
    }
    let Some(record) = storage::get_refresh(&state.db, &hash_token(token)).await? else {
        return Ok(inactive());
    };
    let now = now_millis();
    let live = record.company == company.as_str()
        && record.client_id == client.client_id
        && record.used_ms.is_none()
        && record.revoked_ms.is_none()
        && record.expires_ms.is_none_or(|exp| exp > now);
    if !live || verify::refresh_revoked_with_client(&state, &record).await? {
        return Ok(inactive());
    }
    let user = directory::get_user_by_id(&state.db, &company, &record.user_id).await?;
    let Some(user) = user.filter(|u| u.session_valid(record.auth_time_ms)) else {
        return Ok(inactive());
    };
    Ok(respond(Introspection {
        active: true,
        client_id: Some(record.client_id),
        exp: record.expires_ms.map(|exp| exp / 1000),
        iat: Some(record.created_ms / 1000),
        iss: Some(state.issuer(&company)),
        scope: Some(record.scope),
        sub: Some(user.id),
        token_type: Some("refresh_token"),
        username: Some(user.username),
        ..Introspection::default()
    }))
}
