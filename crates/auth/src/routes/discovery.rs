//! OpenID Connect discovery and the JWKS of a company (the key ring keeps it serialized, `keys::Jwks`).

use actix_web::{web, HttpResponse};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use super::request::CompanyPath;
use crate::error::{OAuthError, OAuthErrorCode};
use crate::keys::Jwks;
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

const CLAIMS: &[&str] = &[
    "sub",
    "iss",
    "aud",
    "exp",
    "iat",
    "auth_time",
    "nonce",
    "at_hash",
    "azp",
    "sid",
    "preferred_username",
    "name",
    "given_name",
    "family_name",
    "updated_at",
    "email",
    "email_verified",
    "phone_number",
    "phone_number_verified",
];

/// The provider metadata of OpenID Connect Discovery 1.0, per company.
#[derive(Serialize, ToSchema)]
pub struct ProviderMetadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    userinfo_endpoint: String,
    jwks_uri: String,
    introspection_endpoint: String,
    revocation_endpoint: String,
    end_session_endpoint: String,
    #[schema(value_type = Vec<String>)]
    response_types_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    response_modes_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    grant_types_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    subject_types_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    id_token_signing_alg_values_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    access_token_signing_alg_values_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    token_endpoint_auth_methods_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    introspection_endpoint_auth_methods_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    revocation_endpoint_auth_methods_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    code_challenge_methods_supported: &'static [&'static str],
    scopes_supported: Vec<&'static str>,
    #[schema(value_type = Vec<String>)]
    claims_supported: &'static [&'static str],
    #[schema(value_type = Vec<String>)]
    prompt_values_supported: &'static [&'static str],
    authorization_response_iss_parameter_supported: bool,
}

/// OpenID Connect discovery
#[utoipa::path(get, path = "/oauth/{company}/.well-known/openid-configuration", tag = "discovery", params(CompanyPath),
    responses(
        (status = 200, description = "Provider metadata", body = ProviderMetadata),
        (status = 404, description = "Unknown company", body = crate::error::Body)))]
pub async fn openid_configuration(
    state: web::Data<AuthState>,
    company: web::Path<CompanyPath>,
) -> Result<HttpResponse, OAuthError> {
    if require_company(&state, &company).await.is_err() {
        return Ok(not_found(&company));
    }
    let issuer = state.issuer(&company);
    let mut scopes: Vec<&str> = USER_SCOPES.to_vec();
    scopes.extend_from_slice(directory::scopes::ALL);
    let at = |path: &str| format!("{issuer}/{path}");
    let metadata = ProviderMetadata {
        authorization_endpoint: at("authorize"),
        token_endpoint: at("token"),
        userinfo_endpoint: at("userinfo"),
        jwks_uri: at("jwks"),
        introspection_endpoint: at("introspect"),
        revocation_endpoint: at("revoke"),
        end_session_endpoint: at("logout"),
        issuer,
        response_types_supported: &["code"],
        response_modes_supported: &["query"],
        grant_types_supported: directory::grants::ALL,
        subject_types_supported: &["public"],
        id_token_signing_alg_values_supported: &["RS256"],
        access_token_signing_alg_values_supported: &["EdDSA"],
        token_endpoint_auth_methods_supported: &[
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],
        introspection_endpoint_auth_methods_supported: &[
            "client_secret_basic",
            "client_secret_post",
        ],
        revocation_endpoint_auth_methods_supported: &[
            "client_secret_basic",
            "client_secret_post",
            "none",
        ],
        code_challenge_methods_supported: &["S256"],
        scopes_supported: scopes,
        claims_supported: CLAIMS,
        prompt_values_supported: &["none", "login"],
        authorization_response_iss_parameter_supported: true,
    };
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "public, max-age=300"))
        .json(metadata))
}

/// Published signing keys
///
/// EdDSA keys for access tokens, RS256 keys for ID tokens.
#[utoipa::path(get, path = "/oauth/{company}/jwks", tag = "discovery", params(CompanyPath),
    responses(
        (status = 200, description = "JWK set", body = Jwks),
        (status = 404, description = "Unknown company", body = crate::error::Body)))]
pub async fn jwks(
    state: web::Data<AuthState>,
    company: web::Path<CompanyPath>,
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
