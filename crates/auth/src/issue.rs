//! Minting of access tokens (EdDSA JWTs, `typ` at+jwt) and ID tokens (RS256 JWTs), and the user's claims
//! that ID tokens and the userinfo endpoint release by scope.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::jwt::{AccessClaims, ACCESS_TOKEN_TYPE, DEFAULT_AUDIENCE};
use directory::User;
use jsonwebtoken::{encode, Header};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::error::OAuthError;
use crate::keys::{CompanyKeys, SigningKey};
use crate::scope;

pub struct Minted {
    pub token: String,
    pub jti: String,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
}

/// Who an access token is for.
pub struct Subject<'a> {
    pub company: &'a str,
    pub client_id: &'a str,
    /// The user, or `None` for a client-credentials token (then `sub` is the client id).
    pub user: Option<&'a User>,
    /// When the client's secret was set (`None` for a public client): a rotation revokes the tokens
    /// issued under earlier secrets by this (docs/token-service.md, Revocation).
    pub client_secret_set_ms: Option<i64>,
    pub scope: &'a str,
    pub ttl_secs: i64,
}

/// A JWS in compact form. Ed25519 keys sign with their parsed key pair directly (the hot path of the
/// token endpoint); other keys go through `jsonwebtoken`.
fn sign<T: Serialize>(key: &SigningKey, typ: &str, claims: &T) -> Result<String, OAuthError> {
    if let Some(pair) = &key.ed25519 {
        let header = serde_json::json!({"typ": typ, "alg": "EdDSA", "kid": key.kid});
        let claims = serde_json::to_vec(claims).map_err(OAuthError::server_error)?;
        let mut jws = URL_SAFE_NO_PAD.encode(header.to_string());
        jws.push('.');
        URL_SAFE_NO_PAD.encode_string(claims, &mut jws);
        let signature = pair.sign(jws.as_bytes());
        jws.push('.');
        URL_SAFE_NO_PAD.encode_string(signature.as_ref(), &mut jws);
        return Ok(jws);
    }
    let mut header = Header::new(key.alg.jwt_algorithm());
    header.kid = Some(key.kid.clone());
    header.typ = Some(typ.to_string());
    encode(&header, claims, &key.encoding).map_err(OAuthError::server_error)
}

pub fn access_token(
    issuer: &str,
    keys: &CompanyKeys,
    subject: &Subject,
) -> Result<Minted, OAuthError> {
    let now = chrono::Utc::now().timestamp();
    // 128 random bits from the thread-local CSPRNG: no system call per token.
    let jti = format!("{:032x}", rand::random::<u128>());
    let claims = AccessClaims {
        iss: issuer.to_string(),
        sub: subject
            .user
            .map_or_else(|| subject.client_id.to_string(), |u| u.id.clone()),
        aud: DEFAULT_AUDIENCE.to_string(),
        exp: now + subject.ttl_secs,
        iat: now,
        jti: jti.clone(),
        scope: subject.scope.to_string(),
        client_id: subject.client_id.to_string(),
        company: subject.company.to_string(),
        username: subject.user.map(|u| u.username.clone()),
        client_secret_set_ms: subject.client_secret_set_ms,
        sessions_valid_after_ms: subject.user.and_then(|u| u.sessions_valid_after_ms),
    };
    Ok(Minted {
        token: sign(&keys.access, ACCESS_TOKEN_TYPE, &claims)?,
        jti,
        exp: claims.exp,
    })
}

#[derive(Serialize)]
struct IdClaims<'a> {
    iss: &'a str,
    aud: &'a str,
    azp: &'a str,
    exp: i64,
    iat: i64,
    auth_time: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
    at_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sid: Option<&'a str>,
    #[serde(flatten)]
    user: UserInfo,
}

/// The signed-in user's claims (OpenID Connect Core 5.3), by the scopes of the token.
#[derive(Serialize, ToSchema)]
pub struct UserInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    email_verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    family_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    given_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phone_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phone_number_verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preferred_username: Option<String>,
    sub: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_at: Option<i64>,
}

/// The user's claims that `scope` releases (userinfo and ID tokens).
pub fn user_claims(user: &User, granted: &str) -> UserInfo {
    let profile = scope::includes(granted, scope::PROFILE);
    let email = user
        .email
        .clone()
        .filter(|_| scope::includes(granted, scope::EMAIL));
    let phone = user
        .phone
        .clone()
        .filter(|_| scope::includes(granted, scope::PHONE));
    let name = format!("{} {}", user.first_name, user.last_name)
        .trim()
        .to_string();
    UserInfo {
        email_verified: email.is_some().then_some(false),
        email,
        family_name: profile.then(|| user.last_name.clone()),
        given_name: profile.then(|| user.first_name.clone()),
        name: profile.then(|| {
            if name.is_empty() {
                user.username.clone()
            } else {
                name
            }
        }),
        phone_number_verified: phone.is_some().then_some(false),
        phone_number: phone,
        preferred_username: profile.then(|| user.username.clone()),
        sub: user.id.clone(),
        updated_at: profile.then(|| user.modified_on.timestamp()),
    }
}

pub struct IdTokenInput<'a> {
    pub issuer: &'a str,
    pub user: &'a User,
    pub client_id: &'a str,
    pub nonce: Option<&'a str>,
    pub auth_time_ms: i64,
    pub access_token: &'a str,
    pub scope: &'a str,
    pub session_id: Option<&'a str>,
    pub ttl_secs: i64,
}

pub fn id_token(keys: &CompanyKeys, input: &IdTokenInput) -> Result<String, OAuthError> {
    let now = chrono::Utc::now().timestamp();
    // at_hash: the left half of the SHA-256 of the access token (OpenID Connect Core 3.1.3.6).
    let digest = Sha256::digest(input.access_token.as_bytes());
    let claims = IdClaims {
        iss: input.issuer,
        aud: input.client_id,
        azp: input.client_id,
        exp: now + input.ttl_secs,
        iat: now,
        auth_time: input.auth_time_ms / 1000,
        nonce: input.nonce,
        at_hash: URL_SAFE_NO_PAD.encode(&digest[..16]),
        sid: input.session_id,
        user: user_claims(input.user, input.scope),
    };
    sign(&keys.id_token, "JWT", &claims)
}
