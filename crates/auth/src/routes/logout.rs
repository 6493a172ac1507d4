//! `GET/POST /oauth/<company>/logout`: the end-session endpoint (OpenID Connect RP-Initiated Logout 1.0).
//! It ends the browser's login session: the session is deleted and its cookie cleared, so the next
//! authorization request shows the login form. With `post_logout_redirect_uri` registered as a redirect
//! URI of the client (named by `client_id`), the browser is sent back there with `state`; otherwise a
//! page says the user is signed out. Unregistered addresses are never redirected to.

use actix_web::cookie::Cookie;
use actix_web::http::StatusCode;
use actix_web::web::{Bytes, Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::secrets::hash_token;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::request::CompanyPath;
use crate::form::Params;
use crate::state::AuthState;
use crate::{page, storage};

/// The parameters of the end-session endpoint, in the query (GET) or a form body (POST).
#[derive(Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LogoutForm {
    /// The client whose registered redirect URI post_logout_redirect_uri must be.
    client_id: Option<String>,
    /// Where to send the browser afterwards; only a registered redirect URI of the client.
    post_logout_redirect_uri: Option<String>,
    /// Echoed on the redirect.
    state: Option<String>,
    /// Accepted and ignored.
    #[serde(rename = "id_token_hint")]
    _id_token_hint: Option<String>,
}

/// End the browser's login session (RP-Initiated Logout), parameters in the query
#[utoipa::path(get, path = "/oauth/{company}/logout", tag = "login",
    params(CompanyPath, LogoutForm),
    responses(
        (status = 200, description = "Signed-out page", content_type = "text/html", body = String),
        (status = 303, description = "Redirect to post_logout_redirect_uri with state"),
        (status = 400, description = "Malformed parameters (HTML page)", content_type = "text/html", body = String),
        (status = 503, description = "The session could not be ended (HTML page)", content_type = "text/html", body = String)))]
pub async fn logout_get(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    logout(state, company, req, body).await
}

/// End the browser's login session (RP-Initiated Logout), parameters in a form body
#[utoipa::path(post, path = "/oauth/{company}/logout", tag = "login", params(CompanyPath),
    request_body(content = LogoutForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Signed-out page", content_type = "text/html", body = String),
        (status = 303, description = "Redirect to post_logout_redirect_uri with state"),
        (status = 400, description = "Malformed parameters (HTML page)", content_type = "text/html", body = String),
        (status = 503, description = "The session could not be ended (HTML page)", content_type = "text/html", body = String)))]
pub async fn logout_post(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    logout(state, company, req, body).await
}

async fn logout(
    state: Data<AuthState>,
    company: Path<CompanyPath>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    // Parameters come in the query (GET) or the form body (POST).
    let source = if req.method() == actix_web::http::Method::POST {
        body.to_vec()
    } else {
        req.query_string().as_bytes().to_vec()
    };
    let form: LogoutForm = match Params::parse(&source).and_then(|params| params.read()) {
        Ok(form) => form,
        Err(e) => return page_response(StatusCode::BAD_REQUEST, "Sign-out failed", &e.description),
    };
    if let Some(cookie) = req.cookie(super::authorize::SESSION_COOKIE) {
        if let Err(e) = storage::delete_session(&state.db, &hash_token(cookie.value())).await {
            tracing::warn!(error = %e, "ending a login session failed");
            return page_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "Sign-out failed",
                "The session could not be ended; try again.",
            );
        }
    }
    let mut response = match redirect_target(&state, &company, &form).await {
        Some(mut target) => {
            if let Some(s) = &form.state {
                target.query_pairs_mut().append_pair("state", s);
            }
            HttpResponse::SeeOther()
                .insert_header(("Location", target.to_string()))
                .insert_header(("Cache-Control", "no-store"))
                .finish()
        }
        None => page_response(
            StatusCode::OK,
            "Signed out",
            "You are signed out. Close this window or sign in again from the application.",
        ),
    };
    let mut gone = Cookie::build(super::authorize::SESSION_COOKIE, "")
        .path(format!("/oauth/{company}"))
        .http_only(true)
        .finish();
    gone.make_removal();
    let _ = response.add_cookie(&gone);
    response
}

/// The post-logout address, when it is a registered redirect URI of the named client.
async fn redirect_target(state: &AuthState, company: &str, form: &LogoutForm) -> Option<url::Url> {
    let uri = form.post_logout_redirect_uri.as_deref()?;
    let client = state
        .client(company, form.client_id.as_deref()?)
        .await
        .ok()??;
    if !client.has_redirect_uri(uri) {
        return None;
    }
    url::Url::parse(uri).ok()
}

fn page_response(status: StatusCode, title: &str, message: &str) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header(("Cache-Control", "no-store"))
        .body(page::error(title, message))
}
