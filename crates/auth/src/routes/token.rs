//! `POST /oauth/<company>/token`: the client-credentials, authorization-code and refresh-token grants.

use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::db::now_millis;
use common::secrets::{hash_token, random_token};
use directory::{grants, OAuthClient, User};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::request::CompanyPath;
use crate::client_auth::authenticate_client;
use crate::error::{OAuthError, OAuthErrorCode};
use crate::form::{self, Params};
use crate::issue::{self, IdTokenInput, Subject};
use crate::pkce;
use crate::state::AuthState;
use crate::storage::{self, CodeUse, RefreshRecord};
use crate::{standing, verify};

/// The form of `POST /oauth/{company}/token`. The client authenticates with HTTP Basic or with
/// `client_id` and `client_secret` in the form (public clients: `client_id` only, with PKCE). The form
/// also takes the other spelling of three fields, one spelling per field (both is 400): `clientId`,
/// `clientSecret` and `redirect_uri`. A field sent empty counts as left out (RFC 6749, section 3.1).
#[derive(Deserialize, ToSchema)]
pub struct TokenForm {
    #[schema(value_type = GrantType)]
    grant_type: String,
    /// authorization_code: the code.
    code: Option<String>,
    /// authorization_code: the redirect URI of the authorization request (or `redirect_uri`).
    #[serde(rename = "redirectURI")]
    redirect_uri_camel: Option<String>,
    /// `redirectURI` as RFC 6749 spells it (`redirect_uri`).
    redirect_uri: Option<String>,
    /// authorization_code: the PKCE verifier.
    code_verifier: Option<String>,
    /// refresh_token: the refresh token.
    refresh_token: Option<String>,
    /// Requested scope (space separated).
    scope: Option<String>,
}

/// The grants of the token endpoint.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrantType {
    ClientCredentials,
    AuthorizationCode,
    RefreshToken,
}

/// The token response of docs/token-service.md: `scope`, `refresh_token` and `id_token` appear only where
/// the grant gives them.
#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds.
    pub expires_in: i64,
    /// Only in authorization-code responses: the granted scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Only when the client issues refresh tokens and the scope asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// In every authorization-code response, whatever the scope; never in the other grants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
}

fn respond(body: TokenResponse) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .insert_header(("Pragma", "no-cache"))
        .json(body)
}

/// Issue tokens
///
/// The client_credentials, authorization_code (with PKCE) and refresh_token grants.
#[utoipa::path(post, path = "/oauth/{company}/token", tag = "oauth", params(CompanyPath),
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("basic" = [])),
    responses(
        (status = 200, description = "Token response", body = TokenResponse,
            headers(("Cache-Control" = String, description = "no-store"))),
        (status = 400, description = "RFC 6749 error", body = crate::error::Body),
        (status = 401, description = "Client authentication failed (invalid_client)", body = crate::error::Body)))]
pub async fn token(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, OAuthError> {
    super::request::require_form(&req)?;
    let params = Params::parse(&body)?;
    let form: TokenForm = params.read()?;
    let grant_type = form.grant_type.as_str();
    let grant = form::variant(grant_type).ok_or_else(|| {
        OAuthError::new(
            OAuthErrorCode::UnsupportedGrantType,
            format!("grant_type {grant_type} is not supported"),
        )
    })?;
    let client = authenticate_client(&state, &company, &req, &params).await?;
    if !client.allows_grant(grant_type) {
        return Err(OAuthError::new(
            OAuthErrorCode::UnauthorizedClient,
            format!("the client is not allowed the {grant_type} grant"),
        ));
    }
    let response = match grant {
        GrantType::ClientCredentials => {
            client_credentials(&state, &company, &client, &form).await?
        }
        GrantType::AuthorizationCode => {
            authorization_code(&state, &company, &client, &form).await?
        }
        GrantType::RefreshToken => refresh(&state, &company, &client, &form).await?,
    };
    Ok(respond(response))
}

async fn client_credentials(
    state: &AuthState,
    company: &str,
    client: &OAuthClient,
    form: &TokenForm,
) -> Result<TokenResponse, OAuthError> {
    if client.is_public() {
        return Err(OAuthError::new(
            OAuthErrorCode::UnauthorizedClient,
            "a public client has no credentials to present",
        ));
    }
    let scope = match form.scope.as_deref() {
        None => client.scopes.join(" "),
        Some(requested) => {
            if let Some(bad) = requested
                .split_ascii_whitespace()
                .find(|s| !client.scopes.iter().any(|c| c == s))
            {
                return Err(OAuthError::new(
                    OAuthErrorCode::InvalidScope,
                    format!("scope {bad} is not allowed for this client"),
                ));
            }
            requested
                .split_ascii_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    let keys = state.keys.get(company).await?;
    let minted = issue::access_token(
        &state.issuer(company),
        &keys,
        &Subject {
            company,
            client_id: &client.client_id,
            client_secret_set_ms: secret_set_ms(client),
            user: None,
            scope: &scope,
            ttl_secs: client.access_token_ttl,
        },
    )?;
    Ok(TokenResponse {
        access_token: minted.token,
        token_type: "Bearer",
        expires_in: client.access_token_ttl,
        scope: None,
        refresh_token: None,
        id_token: None,
    })
}

async fn authorization_code(
    state: &AuthState,
    company: &str,
    client: &OAuthClient,
    form: &TokenForm,
) -> Result<TokenResponse, OAuthError> {
    let code = form::required(&form.code, "code")?;
    // The platform's clients send redirectURI; RFC 6749 spells it redirect_uri. Either is accepted, not
    // both, as for client authentication.
    let redirect_uri = form::either(
        ("redirectURI", &form.redirect_uri_camel),
        ("redirect_uri", &form.redirect_uri),
    )?;
    let code_hash = hash_token(code);
    let now = now_millis();
    let record = match storage::use_code(&state.db, &code_hash, now, company, &client.client_id)
        .await?
    {
        CodeUse::OtherClient => {
            return Err(OAuthError::invalid_grant(
                "the authorization code was issued to another client",
            ))
        }
        CodeUse::Unknown => {
            return Err(OAuthError::invalid_grant(
                "the authorization code is not valid",
            ))
        }
        CodeUse::Replay(record) => {
            // A second exchange means the code leaked: revoke what the first exchange issued. The mark
            // comes first, so a first exchange still in flight sees it (below) and revokes its own.
            storage::mark_code_replayed(&state.db, &code_hash, now).await?;
            storage::revoke_family(&state.db, &record.family_id, now).await?;
            if let Some(jti) = &record.access_jti {
                revocation::revoke(
                    &state.db,
                    jti,
                    &record.company,
                    now + client.access_token_ttl * 1000,
                )
                .await?;
            }
            tracing::warn!(company, client_id = %client.client_id, "authorization code replayed; its tokens are revoked");
            return Err(OAuthError::invalid_grant(
                "the authorization code was already used",
            ));
        }
        CodeUse::First(record) => record,
    };
    if record.expires_ms < now {
        return Err(OAuthError::invalid_grant(
            "the authorization code has expired",
        ));
    }
    if redirect_uri != Some(record.redirect_uri.as_str()) {
        return Err(OAuthError::invalid_grant(
            "redirectURI does not match the authorization request",
        ));
    }
    match (&record.code_challenge, form.code_verifier.as_deref()) {
        (Some(challenge), Some(verifier)) if pkce::verifier_matches(verifier, challenge) => {}
        (Some(_), _) => {
            return Err(OAuthError::invalid_grant(
                "code_verifier does not match the code challenge",
            ))
        }
        (None, Some(_)) => {
            return Err(OAuthError::invalid_grant(
                "no code challenge was sent for this code",
            ))
        }
        (None, None) if client.is_public() => {
            return Err(OAuthError::invalid_grant("a public client must use PKCE"))
        }
        (None, None) => {}
    }
    let user = active_user(state, company, &record.user_id, record.auth_time_ms).await?;
    let keys = state.keys.get(company).await?;
    let issuer = state.issuer(company);
    let access = issue::access_token(
        &issuer,
        &keys,
        &Subject {
            company,
            client_id: &client.client_id,
            client_secret_set_ms: secret_set_ms(client),
            user: Some(&user),
            scope: &user_token_scope(client, &record.scope),
            ttl_secs: client.access_token_ttl,
        },
    )?;
    storage::set_code_access_jti(&state.db, &code_hash, &access.jti).await?;
    let refresh_token = if record.requested_refresh && issues_refresh_tokens(client) {
        Some(
            store_refresh(
                state,
                client,
                &user,
                &record.scope,
                &record.family_id,
                record.auth_time_ms,
                &access,
            )
            .await?,
        )
    } else {
        None
    };
    let id_token = issue::id_token(
        &keys,
        &IdTokenInput {
            issuer: &issuer,
            user: &user,
            client_id: &client.client_id,
            nonce: record.nonce.as_deref(),
            auth_time_ms: record.auth_time_ms,
            access_token: &access.token,
            scope: &record.scope,
            session_id: record.session_id.as_deref(),
            ttl_secs: client.access_token_ttl,
        },
    )?;
    // A replay that raced this exchange revoked the family before this refresh token existed, or the
    // access token before its id was recorded: settle it now that both are stored.
    if storage::code_replayed(&state.db, &code_hash).await? {
        let now = now_millis();
        storage::revoke_family(&state.db, &record.family_id, now).await?;
        revocation::revoke(&state.db, &access.jti, company, access.exp * 1000).await?;
        return Err(OAuthError::invalid_grant(
            "the authorization code was already used",
        ));
    }
    Ok(TokenResponse {
        access_token: access.token,
        token_type: "Bearer",
        expires_in: client.access_token_ttl,
        scope: Some(record.scope),
        refresh_token,
        id_token: Some(id_token),
    })
}

async fn refresh(
    state: &AuthState,
    company: &str,
    client: &OAuthClient,
    form: &TokenForm,
) -> Result<TokenResponse, OAuthError> {
    let presented = form::required(&form.refresh_token, "refresh_token")?;
    let hash = hash_token(presented);
    let now = now_millis();
    let invalid = || OAuthError::invalid_grant("the refresh token is not valid");
    let record = storage::get_refresh(&state.db, &hash)
        .await?
        .ok_or_else(invalid)?;
    if record.company != company || record.client_id != client.client_id {
        return Err(invalid());
    }
    if record.revoked_ms.is_some() {
        return Err(OAuthError::invalid_grant(
            "the refresh token has been revoked",
        ));
    }
    if verify::refresh_revoked_with_client(state, &record).await? {
        return Err(OAuthError::invalid_grant(
            "the refresh token has been revoked: the client's secret was rotated after it was issued",
        ));
    }
    if record.used_ms.is_some() {
        storage::revoke_family(&state.db, &record.family_id, now).await?;
        tracing::warn!(company, client_id = %client.client_id, "rotated refresh token reused; its family is revoked");
        return Err(OAuthError::invalid_grant(
            "the refresh token was already used",
        ));
    }
    if record.expires_ms.is_some_and(|exp| exp < now) {
        return Err(OAuthError::invalid_grant("the refresh token has expired"));
    }
    if !issues_refresh_tokens(client) {
        return Err(OAuthError::new(
            OAuthErrorCode::UnauthorizedClient,
            "the client no longer issues refresh tokens",
        ));
    }
    let user = match active_user(state, company, &record.user_id, record.auth_time_ms).await {
        Ok(user) => user,
        Err(e) => {
            storage::revoke_family(&state.db, &record.family_id, now).await?;
            return Err(e);
        }
    };
    let scope = match form.scope.as_deref() {
        None => record.scope.clone(),
        Some(requested) => {
            if requested
                .split_ascii_whitespace()
                .any(|s| !crate::scope::includes(&record.scope, s))
            {
                return Err(OAuthError::new(
                    OAuthErrorCode::InvalidScope,
                    "a refresh cannot widen the granted scope",
                ));
            }
            requested.to_string()
        }
    };
    // The new tokens are made first, so that the rotation and the storing of the successor are one
    // transaction: a concurrent use of the same token that loses the rotation revokes the family after
    // the successor is stored, never before (storage::revoke_family).
    let keys = state.keys.get(company).await?;
    let access = issue::access_token(
        &state.issuer(company),
        &keys,
        &Subject {
            company,
            client_id: &client.client_id,
            client_secret_set_ms: secret_set_ms(client),
            user: Some(&user),
            scope: &user_token_scope(client, &scope),
            ttl_secs: client.access_token_ttl,
        },
    )?;
    let (refresh_token, successor) = new_refresh(
        client,
        &user,
        &scope,
        &record.family_id,
        record.auth_time_ms,
        &access,
    );
    if !storage::rotate_refresh(&state.db, &hash, now, &successor).await? {
        // Lost a race with another use of the same token: that is a reuse.
        storage::revoke_family(&state.db, &record.family_id, now).await?;
        return Err(OAuthError::invalid_grant(
            "the refresh token was already used",
        ));
    }
    Ok(TokenResponse {
        access_token: access.token,
        token_type: "Bearer",
        expires_in: client.access_token_ttl,
        scope: None,
        refresh_token: Some(refresh_token),
        id_token: None,
    })
}

/// The scope of a user's access token: what was granted, plus `admin` when the client has administration
/// access, whatever the request asked for (the token response still shows the granted scope only).
fn user_token_scope(client: &OAuthClient, granted: &str) -> String {
    if client.admin_access && !crate::scope::includes(granted, crate::scope::ADMIN) {
        format!("{granted} {}", crate::scope::ADMIN)
    } else {
        granted.to_string()
    }
}

/// When the client's secret was set, for the tokens issued on its strength; `None` for a public client.
fn secret_set_ms(client: &OAuthClient) -> Option<i64> {
    client
        .secret_hash
        .as_ref()
        .and(client.secret_rotated_on)
        .map(|at| at.timestamp_millis())
}

fn issues_refresh_tokens(client: &OAuthClient) -> bool {
    client.issue_refresh_token && client.allows_grant(grants::REFRESH_TOKEN)
}

/// The user behind a code or refresh token, refused when deleted, blocked or inactive, or when its
/// sessions were ended (password change, block) after it authenticated at `auth_time_ms`.
async fn active_user(
    state: &AuthState,
    company: &str,
    user_id: &str,
    auth_time_ms: i64,
) -> Result<User, OAuthError> {
    let user = directory::get_user_by_id(&state.db, company, user_id).await?;
    match (standing::session_refusal(user.as_ref(), auth_time_ms), user) {
        (None, Some(user)) => Ok(user),
        (refusal, _) => Err(OAuthError::invalid_grant(
            refusal.unwrap_or("the user no longer exists"),
        )),
    }
}

async fn store_refresh(
    state: &AuthState,
    client: &OAuthClient,
    user: &User,
    scope: &str,
    family_id: &str,
    auth_time_ms: i64,
    access: &issue::Minted,
) -> Result<String, OAuthError> {
    let (token, record) = new_refresh(client, user, scope, family_id, auth_time_ms, access);
    storage::insert_refresh(&state.db, &record).await?;
    Ok(token)
}

/// A new refresh token and the record to store for it.
fn new_refresh(
    client: &OAuthClient,
    user: &User,
    scope: &str,
    family_id: &str,
    auth_time_ms: i64,
    access: &issue::Minted,
) -> (String, RefreshRecord) {
    let token = random_token(32);
    let now = now_millis();
    let record = RefreshRecord {
        token_hash: hash_token(&token),
        family_id: family_id.to_string(),
        company: client.company.clone(),
        client_id: client.client_id.clone(),
        user_id: user.id.clone(),
        scope: scope.to_string(),
        auth_time_ms,
        access_jti: Some(access.jti.clone()),
        access_exp_ms: Some(access.exp * 1000),
        created_ms: now,
        expires_ms: client
            .refresh_token_ttl
            .map(|ttl| refresh_expiry_ms(now, ttl)),
        used_ms: None,
        revoked_ms: None,
    };
    (token, record)
}

/// When a refresh token made at `now_ms` with a lifetime of `ttl_secs` expires. A lifetime past what an
/// i64 of milliseconds holds ends at the largest one: it does not expire within any representable time.
fn refresh_expiry_ms(now_ms: i64, ttl_secs: i64) -> i64 {
    now_ms.saturating_add(ttl_secs.saturating_mul(1000))
}
