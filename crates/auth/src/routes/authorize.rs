//! `GET/POST /oauth/<company>/authorize`: the login page of the authorization-code flow. A request whose
//! client or redirect URI cannot be trusted gets an error page and is never redirected; other errors are
//! redirected to the (registered) redirect URI as RFC 6749 section 4.1.2.1 says. Every field of the query
//! is read as text and checked in turn, so a bad value elsewhere never preempts the checks of the client
//! and the redirect URI.

use std::sync::Arc;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::db::now_millis;
use common::secrets::{hash_token, random_token};
use directory::{grants, OAuthClient};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};

use super::request::CompanyPath;
use crate::error::{OAuthError, OAuthErrorCode};
use crate::form::{variant, Params};
use crate::login::log_in;
use crate::pkce::CodeChallengeMethod;
use crate::scope::{self, Granted};
use crate::state::AuthState;
use crate::storage::{self, CodeRecord, SessionRecord};
use crate::{csrf, page, pkce};

/// The browser's login session; the end-session endpoint clears it.
pub(crate) const SESSION_COOKIE: &str = "speech_session";
const FAILED_LOGIN: &str =
    "Invalid username or password, or the account is locked after repeated failures.";

/// The query of the authorization request.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuthorizeQuery {
    #[param(value_type = String, min_length = 1)]
    client_id: Option<String>,
    #[param(value_type = ResponseType, inline)]
    response_type: Option<String>,
    /// A redirect URI registered for the client, character for character.
    #[param(value_type = String, min_length = 1)]
    redirect_uri: Option<String>,
    state: Option<String>,
    /// Space separated: openid, profile, email, phone, refreshToken.
    scope: Option<String>,
    nonce: Option<String>,
    /// PKCE challenge (required for public clients).
    code_challenge: Option<String>,
    #[param(value_type = Option<CodeChallengeMethod>, inline)]
    code_challenge_method: Option<String>,
    #[param(value_type = Option<Prompt>, inline)]
    prompt: Option<String>,
    /// Seconds: an older login session needs a new login.
    #[param(value_type = Option<i64>, minimum = 0)]
    max_age: Option<String>,
}

/// `response_type` of the authorization request: only the code flow.
#[derive(Deserialize, PartialEq, ToSchema)]
#[serde(rename_all = "snake_case")]
enum ResponseType {
    Code,
}

/// `prompt` of the authorization request.
#[derive(Deserialize, PartialEq, ToSchema)]
#[serde(rename_all = "snake_case")]
enum Prompt {
    None,
    Login,
}

/// The login form of `POST /oauth/{company}/authorize`; the query string of the GET is kept.
// The page always sends every field; one left out fails the CSRF check or the login, in their turn.
#[derive(Deserialize, ToSchema)]
pub struct LoginForm {
    #[schema(value_type = String)]
    username: Option<String>,
    #[schema(value_type = String)]
    password: Option<String>,
    /// The form's CSRF token, matching its pre-login cookie.
    #[schema(value_type = String)]
    csrf: Option<String>,
}

/// A validated authorization request.
struct AuthorizeRequest {
    client: Arc<OAuthClient>,
    redirect_uri: String,
    state: Option<String>,
    granted: Granted,
    nonce: Option<String>,
    code_challenge: Option<String>,
    /// `prompt=login`: show the form even with a live session.
    force_login: bool,
    /// `prompt=none`: never show the form; without a usable session answer `login_required`.
    no_prompt: bool,
    /// `max_age`: a session authenticated longer ago than this many seconds needs a new login.
    max_age_secs: Option<i64>,
}

enum Refusal {
    /// Shown as a page: nothing can be trusted to redirect to.
    Page(StatusCode, &'static str, String),
    /// Sent back to the client's registered redirect URI.
    Redirect {
        redirect_uri: String,
        state: Option<String>,
        error: OAuthError,
    },
}

impl Refusal {
    /// The answer; a redirect carries `iss` (RFC 9207), since one host serves many issuers.
    fn respond(self, issuer: &str) -> HttpResponse {
        match self {
            Refusal::Page(status, title, message) => HttpResponse::build(status)
                .content_type("text/html; charset=utf-8")
                .body(page::error(title, &message)),
            Refusal::Redirect {
                redirect_uri,
                state,
                error,
            } => {
                let mut pairs = vec![
                    ("error", error.code.as_str().to_string()),
                    ("error_description", error.description),
                ];
                if let Some(state) = state {
                    pairs.push(("state", state));
                }
                pairs.push(("iss", issuer.to_string()));
                redirect(&redirect_uri, &pairs, StatusCode::FOUND)
            }
        }
    }
}

fn redirect(base: &str, pairs: &[(&str, String)], status: StatusCode) -> HttpResponse {
    let mut url = url::Url::parse(base).expect("registered redirect URIs are absolute URLs");
    {
        let mut query = url.query_pairs_mut();
        for (k, v) in pairs {
            query.append_pair(k, v);
        }
    }
    HttpResponse::build(status)
        .insert_header(("Location", url.to_string()))
        .insert_header(("Cache-Control", "no-store"))
        .finish()
}

async fn validate(
    state: &AuthState,
    company: &str,
    query: &str,
) -> Result<AuthorizeRequest, Refusal> {
    let bad = |message: String| {
        Refusal::Page(StatusCode::BAD_REQUEST, "Invalid sign-in request", message)
    };
    let query: AuthorizeQuery = Params::parse(query.as_bytes())
        .and_then(|params| params.read())
        .map_err(|e| bad(e.description))?;
    let client_id = query
        .client_id
        .as_deref()
        .ok_or_else(|| bad("client_id is required".into()))?;
    let client = state
        .client(company, client_id)
        .await
        .map_err(|e| bad(OAuthError::from(e).description))?
        .ok_or_else(|| bad("the client is not registered".into()))?;
    let redirect_uri = query
        .redirect_uri
        .as_deref()
        .ok_or_else(|| bad("redirect_uri is required".into()))?;
    if !client.has_redirect_uri(redirect_uri) || url::Url::parse(redirect_uri).is_err() {
        return Err(bad(
            "the redirect URI is not registered for this client".into()
        ));
    }
    let refuse = |code: OAuthErrorCode, description: &str| Refusal::Redirect {
        redirect_uri: redirect_uri.to_string(),
        state: query.state.clone(),
        error: OAuthError::new(code, description),
    };
    if query.response_type.as_deref().and_then(variant) != Some(ResponseType::Code) {
        return Err(refuse(
            OAuthErrorCode::UnsupportedResponseType,
            "response_type must be code",
        ));
    }
    if !client.allows_grant(grants::AUTHORIZATION_CODE) {
        return Err(refuse(
            OAuthErrorCode::UnauthorizedClient,
            "the client is not allowed the authorization_code grant",
        ));
    }
    let granted = scope::grant(query.scope.as_deref(), &client.scopes)
        .map_err(|e| refuse(e.code, &e.description))?;
    let code_challenge = match &query.code_challenge {
        Some(challenge) => {
            let method = query.code_challenge_method.as_deref().and_then(variant);
            pkce::valid_challenge(challenge, method)
                .map_err(|msg| refuse(OAuthErrorCode::InvalidRequest, msg))?;
            Some(challenge.clone())
        }
        None if client.is_public() => {
            return Err(refuse(
                OAuthErrorCode::InvalidRequest,
                "a public client must send a PKCE code_challenge",
            ))
        }
        None => None,
    };
    // Values other than none and login are ignored, but still count as values beside none.
    let prompts: Vec<Option<Prompt>> = query
        .prompt
        .as_deref()
        .unwrap_or_default()
        .split_ascii_whitespace()
        .map(variant)
        .collect();
    if prompts.contains(&Some(Prompt::None)) && prompts.len() > 1 {
        return Err(refuse(
            OAuthErrorCode::InvalidRequest,
            "prompt=none cannot be combined with other prompt values",
        ));
    }
    let max_age_secs = match query.max_age.as_deref() {
        None => None,
        Some(text) => match text.parse::<i64>() {
            Ok(n) if n >= 0 => Some(n),
            _ => {
                return Err(refuse(
                    OAuthErrorCode::InvalidRequest,
                    "max_age must be a number of seconds",
                ))
            }
        },
    };
    Ok(AuthorizeRequest {
        client,
        redirect_uri: redirect_uri.to_string(),
        state: query.state.clone(),
        granted,
        nonce: query.nonce.clone(),
        code_challenge,
        force_login: prompts.contains(&Some(Prompt::Login)),
        no_prompt: prompts.contains(&Some(Prompt::None)),
        max_age_secs,
    })
}

/// Whether the session's login is recent enough for `max_age` (OpenID Connect Core 3.1.2.1).
fn fresh_enough(session: &SessionRecord, max_age_secs: Option<i64>) -> bool {
    max_age_secs.is_none_or(|max| now_millis() - session.auth_time_ms <= max * 1000)
}

/// The session of the request's cookie, if it is live and its user may still sign in with it.
async fn current_session(
    state: &AuthState,
    company: &str,
    req: &HttpRequest,
) -> Option<(String, SessionRecord)> {
    let token = req.cookie(SESSION_COOKIE)?.value().to_string();
    let session = storage::get_session(&state.db, &hash_token(&token))
        .await
        .ok()??;
    if session.company != company || session.expires_ms < now_millis() {
        return None;
    }
    let user = directory::get_user_by_id(&state.db, company, &session.user_id)
        .await
        .ok()??;
    // A password change, block or re-activation since the login ends the session.
    user.session_valid(session.auth_time_ms)
        .then_some((token, session))
}

/// Show the login page
///
/// The authorization-code flow: the login form, or a redirect when a live session exists.
#[utoipa::path(get, path = "/oauth/{company}/authorize", tag = "login",
    params(CompanyPath, AuthorizeQuery),
    responses(
        (status = 200, description = "HTML login form", content_type = "text/html", body = String),
        (status = 302, description = "Redirect to redirect_uri with code, state and iss (or an error)"),
        (status = 303, description = "Redirect with code, state and iss"),
        (status = 400, description = "HTML error page: unknown client or unregistered redirect URI", content_type = "text/html", body = String)))]
pub async fn show(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
) -> HttpResponse {
    let request = match validate(&state, &company, req.query_string()).await {
        Ok(r) => r,
        Err(refusal) => return refusal.respond(&state.issuer(&company)),
    };
    let session = match current_session(&state, &company, &req).await {
        Some((token, session)) if fresh_enough(&session, request.max_age_secs) => {
            Some((token, session))
        }
        _ => None,
    };
    if request.no_prompt && session.is_none() {
        return Refusal::Redirect {
            redirect_uri: request.redirect_uri,
            state: request.state,
            error: OAuthError::new(
                OAuthErrorCode::LoginRequired,
                "the user is not signed in (or not recently enough) and prompt=none forbids asking",
            ),
        }
        .respond(&state.issuer(&company));
    }
    if !request.force_login {
        if let Some((token, session)) = session {
            return match issue_code(&state, &company, &request, &session, &token).await {
                Ok(r) => r,
                Err(e) => Refusal::Redirect {
                    redirect_uri: request.redirect_uri,
                    state: request.state,
                    error: e,
                }
                .respond(&state.issuer(&company)),
            };
        }
    }
    login_page(&state, &company, &request, &req, "", None, StatusCode::OK)
}

/// The login page's policy. Browsers apply `form-action` to the redirect that follows the form's POST as
/// well, so the (registered, validated) redirect URI's origin must be allowed beside the page's own.
fn csp(redirect_uri: &str) -> String {
    let origin = url::Url::parse(redirect_uri)
        .map(|u| u.origin().ascii_serialization())
        .ok()
        .filter(|o| {
            o != "null" && !o.contains(|c: char| c == ';' || c == ',' || c.is_whitespace())
        });
    match origin {
        Some(origin) => format!(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' {origin}; frame-ancestors 'none'"
        ),
        None => "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
            .to_string(),
    }
}

/// The login form, with a fresh CSRF token in its hidden field and in the pre-login cookie.
fn login_page(
    state: &AuthState,
    company: &str,
    request: &AuthorizeRequest,
    req: &HttpRequest,
    username: &str,
    error: Option<&str>,
    status: StatusCode,
) -> HttpResponse {
    let action = format!("{}?{}", req.path(), req.query_string());
    let (csrf_token, csrf_cookie) = csrf::issue(company, state.public_url.starts_with("https://"));
    HttpResponse::build(status)
        .cookie(csrf_cookie)
        .content_type("text/html; charset=utf-8")
        .insert_header(("Cache-Control", "no-store"))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("Content-Security-Policy", csp(&request.redirect_uri)))
        .body(page::login(
            company,
            &request.client.name,
            &action,
            &csrf_token,
            username,
            error,
        ))
}

/// Submit the login form
///
/// The query string of the GET is kept.
#[utoipa::path(post, path = "/oauth/{company}/authorize", tag = "login",
    params(CompanyPath, AuthorizeQuery),
    request_body(content = LoginForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Redirect to redirect_uri with code, state and iss"),
        (status = 400, description = "HTML error page", content_type = "text/html", body = String),
        (status = 401, description = "HTML login form with an error", content_type = "text/html", body = String),
        (status = 403, description = "HTML error page: the form's CSRF token or origin is wrong", content_type = "text/html", body = String),
        (status = 429, description = "Too many attempts from this address", content_type = "text/html", body = String)))]
pub async fn submit(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    let request = match validate(&state, &company, req.query_string()).await {
        Ok(r) => r,
        Err(refusal) => return refusal.respond(&state.issuer(&company)),
    };
    let address = crate::rate_limit::client_address(&req, &state.config);
    if let Err(wait) = state.login_limiter.attempt(&address) {
        let mut response = login_page(
            &state,
            &company,
            &request,
            &req,
            "",
            Some("Too many sign-in attempts; try again shortly."),
            StatusCode::TOO_MANY_REQUESTS,
        );
        response.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            actix_web::http::header::HeaderValue::from(wait),
        );
        return response;
    }
    // Repeated fields are refused: such a form logs no one in, and the page says why.
    let form: LoginForm = match Params::parse(&body).and_then(|form| form.read()) {
        Ok(form) => form,
        Err(e) => {
            return login_page(
                &state,
                &company,
                &request,
                &req,
                "",
                Some(&format!(
                    "The form was not sent as this page made it ({}).",
                    e.description
                )),
                StatusCode::BAD_REQUEST,
            )
        }
    };
    let own_origin = url::Url::parse(&state.public_url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default();
    if let Err(why) = csrf::check(&req, form.csrf.as_deref(), &own_origin) {
        tracing::warn!(company = %company, why, "login form refused");
        return login_page(
            &state,
            &company,
            &request,
            &req,
            "",
            Some(&format!("{why}; please sign in again.")),
            StatusCode::FORBIDDEN,
        );
    }
    let username = form.username.as_deref().unwrap_or_default();
    let password = form.password.as_deref().unwrap_or_default();
    let user = match log_in(&state, &company, username, password).await {
        Ok(Ok(user)) => user,
        Ok(Err(reason)) => {
            tracing::warn!(company = %company, ?reason, "login refused");
            return login_page(
                &state,
                &company,
                &request,
                &req,
                username,
                Some(FAILED_LOGIN),
                StatusCode::UNAUTHORIZED,
            );
        }
        Err(e) => {
            return Refusal::Redirect {
                redirect_uri: request.redirect_uri,
                state: request.state,
                error: e.into(),
            }
            .respond(&state.issuer(&company))
        }
    };
    let token = random_token(32);
    let now = now_millis();
    let session = SessionRecord {
        id_hash: hash_token(&token),
        company: company.to_string(),
        user_id: user.id.clone(),
        auth_time_ms: now,
        expires_ms: now + state.config.session_ttl_secs * 1000,
    };
    if let Err(e) = storage::insert_session(&state.db, &session).await {
        return Refusal::Redirect {
            redirect_uri: request.redirect_uri,
            state: request.state,
            error: e.into(),
        }
        .respond(&state.issuer(&company));
    }
    let mut response = match issue_code(&state, &company, &request, &session, &token).await {
        Ok(r) => r,
        Err(e) => {
            return Refusal::Redirect {
                redirect_uri: request.redirect_uri,
                state: request.state,
                error: e,
            }
            .respond(&state.issuer(&company))
        }
    };
    let cookie = Cookie::build(SESSION_COOKIE, token)
        .path(format!("/oauth/{company}"))
        .http_only(true)
        .secure(state.public_url.starts_with("https://"))
        .same_site(SameSite::Lax)
        .max_age(actix_web::cookie::time::Duration::seconds(
            state.config.session_ttl_secs,
        ))
        .finish();
    let _ = response.add_cookie(&cookie);
    response
}

/// Stores a new code for the session's user and redirects with `code`, `state` and `session_state`.
async fn issue_code(
    state: &AuthState,
    company: &str,
    request: &AuthorizeRequest,
    session: &SessionRecord,
    session_token: &str,
) -> Result<HttpResponse, OAuthError> {
    let code = random_token(32);
    let now = now_millis();
    let sid = session.id_hash.chars().take(22).collect::<String>();
    storage::insert_code(
        &state.db,
        &CodeRecord {
            code_hash: hash_token(&code),
            company: company.to_string(),
            client_id: request.client.client_id.clone(),
            user_id: session.user_id.clone(),
            redirect_uri: request.redirect_uri.clone(),
            scope: request.granted.scope.clone(),
            requested_refresh: request.granted.refresh_requested,
            nonce: request.nonce.clone(),
            code_challenge: request.code_challenge.clone(),
            auth_time_ms: session.auth_time_ms,
            session_id: Some(sid),
            family_id: uuid::Uuid::new_v4().to_string(),
            expires_ms: now + state.config.code_ttl_secs * 1000,
            used_ms: None,
            access_jti: None,
        },
    )
    .await?;
    let mut pairs = vec![("code", code)];
    if let Some(s) = &request.state {
        pairs.push(("state", s.clone()));
    }
    pairs.push(("iss", state.issuer(company)));
    pairs.push((
        "session_state",
        session_state(
            &request.client.client_id,
            &request.redirect_uri,
            session_token,
        ),
    ));
    Ok(redirect(
        &request.redirect_uri,
        &pairs,
        StatusCode::SEE_OTHER,
    ))
}

/// OpenID Connect Session Management 1.0: a salted hash of client, origin and browser session.
fn session_state(client_id: &str, redirect_uri: &str, session_token: &str) -> String {
    let origin = url::Url::parse(redirect_uri)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default();
    let salt = random_token(12);
    let digest = Sha256::digest(
        format!("{client_id} {origin} {} {salt}", hash_token(session_token)).as_bytes(),
    );
    format!("{}.{salt}", URL_SAFE_NO_PAD.encode(digest))
}
