//! OpenID Connect discovery and the JWKS of a company.

use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::error::{OAuthError, OAuthErrorCode};
use crate::scope::USER_SCOPES;
use crate::state::AuthState;

/// 404 for a company that does not exist, so its keys are never generated.
pub(crate) async fn require_company(state: &AuthState, company: &str) -> Result<(), OAuthError> {
    match directory::get_company(&state.db, company).await? {
        Some(_) => Ok(()),
        None => Err(OAuthError::new(
            OAuthErrorCode::InvalidRequest,
            format!("unknown company {company}"),
        )),
    }
}

fn not_found(company: &str) -> HttpResponse {
    HttpResponse::NotFound().json(
        json!({"error": "not_found", "error_description": format!("unknown company {company}")}),
    )
}

pub async fn openid_configuration(
    state: web::Data<AuthState>,
    company: web::Path<String>,
) -> Result<HttpResponse, OAuthError> {
    if require_company(&state, &company).await.is_err() {
        return Ok(not_found(&company));
    }
    let issuer = state.issuer(&company);
    let mut scopes: Vec<&str> = USER_SCOPES.to_vec();
    scopes.extend_from_slice(directory::scopes::ALL);
    Ok(HttpResponse::Ok().insert_header(("Cache-Control", "public, max-age=300")).json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "userinfo_endpoint": format!("{issuer}/userinfo"),
        "jwks_uri": format!("{issuer}/jwks"),
        "introspection_endpoint": format!("{issuer}/introspect"),
        "revocation_endpoint": format!("{issuer}/revoke"),
        "end_session_endpoint": format!("{issuer}/logout"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": directory::grants::ALL,
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "access_token_signing_alg_values_supported": ["EdDSA"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": scopes,
        "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "azp", "sid",
            "preferred_username", "name", "given_name", "family_name", "updated_at", "email", "email_verified",
            "phone_number", "phone_number_verified"],
        "prompt_values_supported": ["none", "login"],
        "authorization_response_iss_parameter_supported": true,
    })))
}

pub async fn jwks(
    state: web::Data<AuthState>,
    company: web::Path<String>,
) -> Result<HttpResponse, OAuthError> {
    if require_company(&state, &company).await.is_err() {
        return Ok(not_found(&company));
    }
    let keys = state.keys.get(&company).await?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("Cache-Control", "public, max-age=60"))
        .body(keys.jwks.clone()))
}
