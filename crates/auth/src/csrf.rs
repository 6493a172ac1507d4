//! Login CSRF protection. Without it a cross-site page could post the login form with the attacker's
//! credentials and sign the victim's browser into the attacker's account. The form carries a random token
//! that must equal the one in a pre-login cookie set with the form (a cross-site page can read neither),
//! and a POST whose `Origin` is another site, or whose `Sec-Fetch-Site` says cross-site, is refused.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::HttpRequest;
use common::secrets::{constant_time_eq, random_token};

pub const COOKIE: &str = "speech_login_csrf";

/// A new token and the cookie that carries it (scoped to the company's OAuth paths, one hour).
pub fn issue(company: &str, secure: bool) -> (String, Cookie<'static>) {
    let token = random_token(24);
    let cookie = Cookie::build(COOKIE, token.clone())
        .path(format!("/oauth/{company}"))
        .http_only(true)
        .secure(secure)
        .same_site(SameSite::Lax)
        .max_age(actix_web::cookie::time::Duration::hours(1))
        .finish();
    (token, cookie)
}

/// Checks a login POST: where it comes from, then the token the form `sent` against the cookie.
pub fn check(req: &HttpRequest, sent: Option<&str>, own_origin: &str) -> Result<(), &'static str> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    if let Some(origin) = header("origin") {
        if origin != own_origin {
            return Err("the form was posted from another site");
        }
    }
    if let Some(site) = header("sec-fetch-site") {
        if site != "same-origin" && site != "none" {
            return Err("the form was posted from another site");
        }
    }
    let cookie = req.cookie(COOKIE).ok_or("the sign-in form has expired")?;
    let sent = sent.ok_or("the sign-in form has expired")?;
    if cookie.value().is_empty() || !constant_time_eq(cookie.value().as_bytes(), sent.as_bytes()) {
        return Err("the sign-in form has expired");
    }
    Ok(())
}
