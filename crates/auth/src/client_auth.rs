//! Client authentication at the token, introspection and revocation endpoints: HTTP Basic
//! (`client_secret_basic`), form fields (`client_secret_post`), or client id alone for public clients,
//! which must then prove possession with PKCE. Exactly one method per request. The form fields
//! (`FormCredentials`, read from whichever form the endpoint takes) may be spelled `clientId` and
//! `clientSecret`, as the platform's clients send them (one spelling per field).

use std::sync::Arc;

use actix_web::HttpRequest;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use common::secrets::verify_client_secret;
use directory::OAuthClient;
use percent_encoding::percent_decode_str;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::error::OAuthError;
use crate::form::{either, Params};
use crate::state::AuthState;

/// Client authentication in the form (`client_secret_post`, or the id alone for a public client).
#[derive(Deserialize, ToSchema)]
pub struct FormCredentials {
    /// Form authentication, or the id of a public client (or `clientId`).
    client_id: Option<String>,
    /// `client_id` as the platform's clients spell it.
    #[serde(rename = "clientId")]
    client_id_camel: Option<String>,
    /// Form authentication (or `clientSecret`).
    client_secret: Option<String>,
    /// `client_secret` as the platform's clients spell it.
    #[serde(rename = "clientSecret")]
    client_secret_camel: Option<String>,
}

struct Presented {
    client_id: String,
    secret: Option<String>,
}

/// Credentials of an `Authorization: Basic` header; the parts are form-encoded (RFC 6749 section 2.3.1).
fn basic_credentials(req: &HttpRequest) -> Result<Option<Presented>, OAuthError> {
    let Some(value) = req.headers().get(actix_web::http::header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| OAuthError::invalid_request("malformed Authorization header"))?;
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return Err(OAuthError::invalid_request(
            "malformed Authorization header",
        ));
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return Ok(None);
    }
    let decoded = STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| OAuthError::invalid_request("malformed Basic credentials"))?;
    let (id, secret) = decoded
        .split_once(':')
        .ok_or_else(|| OAuthError::invalid_request("malformed Basic credentials"))?;
    let decode = |s: &str| {
        percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    Ok(Some(Presented {
        client_id: decode(id),
        secret: Some(decode(secret)),
    }))
}

/// Authenticates the calling client of `company`. Every failure is `invalid_client` (401) and says no
/// more than that, so responses do not reveal which client ids exist.
pub async fn authenticate_client(
    state: &AuthState,
    company: &str,
    req: &HttpRequest,
    params: &Params,
) -> Result<Arc<OAuthClient>, OAuthError> {
    let form: FormCredentials = params.read()?;
    let form_id = either(
        ("client_id", &form.client_id),
        ("clientId", &form.client_id_camel),
    )?;
    let form_secret = either(
        ("client_secret", &form.client_secret),
        ("clientSecret", &form.client_secret_camel),
    )?;
    let basic = basic_credentials(req)?;
    let presented = match basic {
        Some(basic) => {
            if form_secret.is_some() {
                return Err(OAuthError::invalid_request(
                    "use one client authentication method, not two",
                ));
            }
            if form_id.is_some_and(|id| id != basic.client_id) {
                return Err(OAuthError::invalid_request(
                    "client_id does not match the Basic credentials",
                ));
            }
            basic
        }
        None => Presented {
            client_id: form_id
                .ok_or_else(|| {
                    OAuthError::invalid_client(company, "client authentication is required")
                })?
                .to_string(),
            secret: form_secret.map(str::to_string),
        },
    };
    let failed = || OAuthError::invalid_client(company, "client authentication failed");
    let client = state
        .client(company, &presented.client_id)
        .await?
        .ok_or_else(failed)?;
    match (&client.secret_hash, &presented.secret) {
        (None, None) => Ok(client),
        (Some(hash), Some(secret)) => {
            if verify_client_secret(&state.secret, secret, hash) {
                return Ok(client);
            }
            // The cached record may predate a secret rotation: check the stored one once.
            let fresh = state
                .client_fresh(company, &presented.client_id)
                .await?
                .ok_or_else(failed)?;
            match &fresh.secret_hash {
                Some(hash) if verify_client_secret(&state.secret, secret, hash) => Ok(fresh),
                _ => Err(failed()),
            }
        }
        _ => Err(failed()),
    }
}
