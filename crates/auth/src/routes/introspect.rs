//! `POST /oauth/<company>/introspect` (RFC 7662). Any authenticated confidential client of the company may
//! ask about the company's access tokens (a resource server checks tokens presented to it); a refresh
//! token is described only to the client it was issued to. A user token is active only while its user
//! exists and may sign in. Anything else is simply `{"active": false}`.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::db::now_millis;
use common::secrets::hash_token;
use serde_json::json;

use crate::client_auth::authenticate_client;
use crate::error::OAuthError;
use crate::form::Params;
use crate::state::AuthState;
use crate::storage;
use crate::verify::{self, verify_access_token};

/// Token introspection (RFC 7662)
#[utoipa::path(post, path = "/oauth/{company}/introspect", tag = "oauth", params(crate::openapi::CompanyPath),
    request_body(content = crate::openapi::TokenReferenceForm, content_type = "application/x-www-form-urlencoded"),
    security(("basic" = []), ()),
    responses(
        (status = 200, description = "Introspection response ({\"active\": false} for unknown tokens)", body = crate::openapi::Introspection),
        (status = 400, description = "RFC 6749 error", body = crate::error::Body),
        (status = 401, description = "Client authentication failed (invalid_client)", body = crate::error::Body)))]
pub async fn introspect(
    state: Data<AuthState>,
    company: Path<String>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, OAuthError> {
    super::require_form(&req)?;
    let params = Params::parse(&body)?;
    let client = authenticate_client(&state, &company, &req, &params).await?;
    if client.is_public() {
        return Err(OAuthError::invalid_client(
            &company,
            "a public client cannot introspect tokens",
        ));
    }
    let token = params.require("token")?;
    let inactive = || {
        HttpResponse::Ok()
            .insert_header(("Cache-Control", "no-store"))
            .json(json!({"active": false}))
    };
    let hint = params.get("token_type_hint");
    if hint != Some("refresh_token") {
        if let Ok(claims) = verify_access_token(&state, &company, token).await {
            if claims.is_user_token() {
                let user = directory::get_user_by_id(&state.db, &company, &claims.sub).await?;
                if !user.is_some_and(|u| u.can_log_in()) {
                    return Ok(inactive());
                }
            }
            let mut body = json!({
                "active": true,
                "token_type": "Bearer",
                "scope": claims.scope,
                "client_id": claims.client_id,
                "sub": claims.sub,
                "aud": claims.aud,
                "iss": claims.iss,
                "exp": claims.exp,
                "iat": claims.iat,
                "jti": claims.jti,
                "company": claims.company,
            });
            if let Some(username) = claims.username {
                body["username"] = json!(username);
            }
            return Ok(HttpResponse::Ok()
                .insert_header(("Cache-Control", "no-store"))
                .json(body));
        }
    }
    let Some(record) = storage::get_refresh(&state.db, &hash_token(token)).await? else {
        return Ok(inactive());
    };
    let now = now_millis();
    let live = record.company == *company
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
    let mut body = json!({
        "active": true,
        "token_type": "refresh_token",
        "scope": record.scope,
        "client_id": record.client_id,
        "sub": user.id,
        "username": user.username,
        "iss": state.issuer(&company),
        "iat": record.created_ms / 1000,
    });
    if let Some(exp) = record.expires_ms {
        body["exp"] = json!(exp / 1000);
    }
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(body))
}
