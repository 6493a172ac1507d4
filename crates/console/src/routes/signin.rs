//! `/console/`: the start page (which company), and for a company its sign-in (`signin`, then the token
//! service's page, then `callback`) and sign-out (`signout`, a form with the session's CSRF token, then
//! the token service's end-session endpoint, then `signedout`). The browser keeps only the session
//! cookie: `HttpOnly`, `SameSite=Lax`, `Secure` when the console is served over HTTPS.

use actix_web::cookie::{time::Duration as CookieAge, Cookie, SameSite};
use actix_web::http::{header, StatusCode};
use actix_web::web::{Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::secrets::{hash_token, random_token};
use maud::html;
use serde::Deserialize;

use super::session::{Session, SESSION_COOKIE};
use crate::client::{self, SCOPES};
use crate::error::ConsoleError;
use crate::pages::layout::see_other;
use crate::pages::{layout, start};
use crate::sessions;
use crate::signin::{safe_back_to, Pending, PENDING_COOKIE, PENDING_SECONDS};
use crate::state::Console;

type Page = Result<HttpResponse, ConsoleError>;

fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

fn company_of(path: &str) -> Result<String, ConsoleError> {
    if common::jwt::valid_company(path) {
        Ok(path.to_string())
    } else {
        Err(ConsoleError::BadRequest(format!(
            "no company is named {path:?}"
        )))
    }
}

fn cookie<'c>(console: &Console, name: &'c str, value: String, path: String) -> Cookie<'c> {
    Cookie::build(name, value)
        .path(path)
        .http_only(true)
        .secure(console.settings.secure())
        .same_site(SameSite::Lax)
        .finish()
}

#[derive(Deserialize)]
pub struct StartQuery {
    company: Option<String>,
}

/// `GET /console/`: which company to sign in to; with `?company=`, that company's console.
pub async fn start(query: Query<StartQuery>) -> HttpResponse {
    match query.company.as_deref().map(str::trim) {
        Some(company) if common::jwt::valid_company(company) => {
            see_other(&format!("/console/{company}/"))
        }
        Some(company) => start::page(StatusCode::BAD_REQUEST, Some(company)),
        None => start::page(StatusCode::OK, None),
    }
}

#[derive(Deserialize)]
pub struct SignInQuery {
    back_to: Option<String>,
}

/// `GET /console/<company>/signin`: to the token service's sign-in page, with PKCE.
pub async fn signin(
    console: Data<Console>,
    company: Path<String>,
    query: Query<SignInQuery>,
) -> Page {
    let company = company_of(&company)?;
    let back_to = safe_back_to(&company, query.back_to.as_deref());
    let pending = Pending::start(&company, &back_to, now_s());
    let (client_id, _) = console.keys.client(&company);
    let redirect_uri = console.settings.redirect_uri(&company);
    let authorize = url::Url::parse_with_params(
        &format!(
            "{}/oauth/{company}/authorize",
            console.settings.public_auth_url.trim_end_matches('/')
        ),
        &[
            ("client_id", client_id.as_str()),
            ("response_type", "code"),
            ("redirect_uri", redirect_uri.as_str()),
            ("scope", SCOPES),
            ("state", pending.state.as_str()),
            ("code_challenge", pending.challenge().as_str()),
            ("code_challenge_method", "S256"),
        ],
    )
    .map_err(ConsoleError::internal)?;
    let mut pending_cookie = cookie(
        &console,
        PENDING_COOKIE,
        pending.to_cookie(&console.keys.signin),
        format!("/console/{company}/"),
    );
    pending_cookie.set_max_age(CookieAge::seconds(PENDING_SECONDS));
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, authorize.as_str()))
        .insert_header(("Cache-Control", "no-store"))
        .cookie(pending_cookie)
        .finish())
}

#[derive(Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: i64,
}

#[derive(Deserialize)]
struct TokenClaims {
    company: String,
    username: Option<String>,
    sub: String,
}

/// `GET /console/<company>/callback`: the code exchanged for the user's token, kept in a new session.
pub async fn callback(
    console: Data<Console>,
    company: Path<String>,
    query: Query<CallbackQuery>,
    req: HttpRequest,
) -> Page {
    let company = company_of(&company)?;
    let pending = req
        .cookie(PENDING_COOKIE)
        .and_then(|c| Pending::from_cookie(c.value(), &console.keys.signin, now_s()))
        .filter(|pending| pending.company == company)
        .ok_or_else(|| {
            ConsoleError::BadRequest(
                "this sign-in has expired or was not started here: sign in again".into(),
            )
        })?;
    if !pending.is_state(query.state.as_deref().unwrap_or_default()) {
        return Err(ConsoleError::BadRequest(
            "this sign-in has expired or was not started here: sign in again".into(),
        ));
    }
    if let Some(error) = &query.error {
        return Err(ConsoleError::BadRequest(format!(
            "the sign-in was refused: {error}"
        )));
    }
    let code = query
        .code
        .as_deref()
        .ok_or_else(|| ConsoleError::BadRequest("the sign-in came back without a code".into()))?;
    let (client_id, client_secret) = console.keys.client(&company);
    let redirect_uri = console.settings.redirect_uri(&company);
    let response = console
        .http
        .post(format!(
            "{}/oauth/{company}/token",
            console.settings.auth_url.trim_end_matches('/')
        ))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri.as_str()),
            ("client_id", client_id.as_str()),
            ("client_secret", client_secret.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ])
        .send()
        .await
        .map_err(ConsoleError::internal)?;
    if !response.status().is_success() {
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        tracing::warn!(%status, %body, "the token service refused the console's code");
        return Err(ConsoleError::BadRequest(
            "the token service refused the sign-in: sign in again".into(),
        ));
    }
    let answer: TokenAnswer = response.json().await.map_err(ConsoleError::internal)?;
    // The token came straight from the token service over the console's own connection; it is read,
    // not verified, here: the API verifies it on every call.
    let claims = read_claims(&answer.access_token)?;
    if claims.company != company {
        return Err(ConsoleError::internal("a token of another company"));
    }
    let id = random_token(32);
    let id_hash = hash_token(&id);
    let now_ms = common::db::now_millis();
    let row = sessions::SessionRow {
        access_token: console.keys.seal.seal(&id_hash, &answer.access_token),
        id_hash,
        company: company.clone(),
        username: claims.username.unwrap_or(claims.sub),
        csrf: random_token(24),
        expires_ms: now_ms + answer.expires_in.clamp(0, 86_400) * 1000,
    };
    sessions::insert(&console.db, &row, now_ms).await?;
    let mut ended = cookie(
        &console,
        PENDING_COOKIE,
        String::new(),
        format!("/console/{company}/"),
    );
    ended.make_removal();
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, pending.back_to.as_str()))
        .insert_header(("Cache-Control", "no-store"))
        .cookie(cookie(&console, SESSION_COOKIE, id, "/console/".into()))
        .cookie(ended)
        .finish())
}

fn read_claims(token: &str) -> Result<TokenClaims, ConsoleError> {
    let payload = token
        .split('.')
        .nth(1)
        .and_then(|part| URL_SAFE_NO_PAD.decode(part).ok())
        .ok_or_else(|| {
            ConsoleError::internal("the token service answered a token that is not a JWT")
        })?;
    serde_json::from_slice(&payload).map_err(ConsoleError::internal)
}

#[derive(Deserialize)]
pub struct SignOutForm {
    csrf: String,
}

/// `POST /console/<company>/signout`: the session ends here, its token is revoked, and the browser goes
/// on to end its sign-in at the token service.
pub async fn signout(session: Session, form: Form<SignOutForm>) -> Page {
    session.check_csrf(&form.csrf)?;
    let console = session.console.clone();
    let company = session.row.company.clone();
    sessions::delete(&console.db, &session.row.id_hash).await?;
    let (client_id, client_secret) = console.keys.client(&company);
    let revoked = console
        .http
        .post(format!(
            "{}/oauth/{company}/revoke",
            console.settings.auth_url.trim_end_matches('/')
        ))
        .form(&[
            ("token", session.token.as_str()),
            ("client_id", client_id.as_str()),
            ("client_secret", client_secret.as_str()),
        ])
        .send()
        .await;
    if let Err(error) = revoked {
        tracing::warn!(%error, "the console could not revoke a signed-out session's token");
    }
    let logout = url::Url::parse_with_params(
        &format!(
            "{}/oauth/{company}/logout",
            console.settings.public_auth_url.trim_end_matches('/')
        ),
        &[
            ("client_id", client_id.as_str()),
            (
                "post_logout_redirect_uri",
                client::signed_out_uri(&console.settings.public_url, &company).as_str(),
            ),
        ],
    )
    .map_err(ConsoleError::internal)?;
    let mut ended = cookie(&console, SESSION_COOKIE, String::new(), "/console/".into());
    ended.make_removal();
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, logout.as_str()))
        .insert_header(("Cache-Control", "no-store"))
        .cookie(ended)
        .finish())
}

/// `GET /console/<company>/signedout`: where the token service sends the browser back.
pub async fn signed_out(company: Path<String>) -> Page {
    let company = company_of(&company)?;
    Ok(layout::page(
        StatusCode::OK,
        "Signed out",
        None,
        html! {
            p { "You are signed out of " (company) "." }
            p { a href={ "/console/" (company) "/" } { "Sign in again" } }
        },
    ))
}
