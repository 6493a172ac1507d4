//! The token service's endpoints, all under `/oauth/<company>`, and what several of them read: the company
//! of the path and the token reference of introspection and revocation.

pub(crate) mod authorize;
pub(crate) mod discovery;
pub(crate) mod introspect;
pub(crate) mod logout;
pub(crate) mod revoke;
pub(crate) mod token;
pub(crate) mod userinfo;

use std::fmt;
use std::ops::Deref;

use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

/// The largest body an OAuth endpoint reads.
pub const MAX_BODY: usize = 64 * 1024;

/// The company every endpoint belongs to.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct CompanyPath {
    /// The company's short name.
    company: String,
}

impl Deref for CompanyPath {
    type Target = String;

    fn deref(&self) -> &String {
        &self.company
    }
}

impl fmt::Display for CompanyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.company)
    }
}

/// The form of `POST /oauth/{company}/introspect` and `/revoke`. The client authenticates with HTTP Basic
/// or, instead (one method, not both), with `client_id` and `client_secret` in this form, as at the token
/// endpoint (`clientId` and `clientSecret` are taken too, one spelling per field).
#[derive(Deserialize, ToSchema)]
pub struct TokenReferenceForm {
    #[schema(min_length = 1)]
    token: String,
    /// `access_token` or `refresh_token`: where to look first. The token is found whatever the value,
    /// and an unknown one is ignored (RFC 7009, section 2.1).
    #[schema(example = "refresh_token")]
    token_type_hint: Option<String>,
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/oauth/{company}")
            .app_data(web::PayloadConfig::new(MAX_BODY))
            .wrap(ErrorHandlers::new().handler(StatusCode::PAYLOAD_TOO_LARGE, too_large))
            .route("/token", web::post().to(token::token))
            .route("/authorize", web::get().to(authorize::show))
            .route("/authorize", web::post().to(authorize::submit))
            .route(
                "/.well-known/openid-configuration",
                web::get().to(discovery::openid_configuration),
            )
            .route("/jwks", web::get().to(discovery::jwks))
            .route("/userinfo", web::get().to(userinfo::userinfo))
            .route("/userinfo", web::post().to(userinfo::userinfo))
            .route("/introspect", web::post().to(introspect::introspect))
            .route("/revoke", web::post().to(revoke::revoke))
            .route("/logout", web::get().to(logout::logout_get))
            .route("/logout", web::post().to(logout::logout_post)),
    );
}

/// Requests to the OAuth endpoints that carry a body must be form-encoded.
fn require_form(req: &actix_web::HttpRequest) -> Result<(), crate::error::OAuthError> {
    let is_form = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_form_media_type);
    if is_form {
        Ok(())
    } else {
        Err(crate::error::OAuthError::invalid_request(
            "the body must be application/x-www-form-urlencoded",
        ))
    }
}

/// Whether a Content-Type names the form media type: the type before any `;` (parameters such as
/// `charset` are allowed) is `application/x-www-form-urlencoded`, compared whole and case-insensitively,
/// not as a prefix.
fn is_form_media_type(content_type: &str) -> bool {
    let media_type = content_type.split(';').next().unwrap_or_default();
    media_type
        .trim_matches([' ', '\t'])
        .eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

/// A body over the limit is answered as an RFC 6749 error in JSON, like every other refusal here, not
/// with actix's plain-text 413.
fn too_large<B>(res: ServiceResponse<B>) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let (req, _) = res.into_parts();
    let response = HttpResponse::PayloadTooLarge()
        .insert_header(("Cache-Control", "no-store"))
        .json(serde_json::json!({
            "error": "invalid_request",
            "error_description": format!("the body is larger than {MAX_BODY} bytes"),
        }));
    Ok(ErrorHandlerResponse::Response(
        ServiceResponse::new(req, response).map_into_right_body(),
    ))
}

/// What the server itself refuses (a body too slow, 408; a connection past the limit, 503), as an
/// OAuth error.
pub fn server_answer(status: StatusCode, message: String) -> HttpResponse {
    let error = if status == StatusCode::SERVICE_UNAVAILABLE {
        "temporarily_unavailable"
    } else {
        "invalid_request"
    };
    HttpResponse::build(status)
        .insert_header(("Cache-Control", "no-store"))
        .json(serde_json::json!({"error": error, "error_description": message}))
}

#[cfg(test)]
mod tests {
    use super::is_form_media_type;

    #[test]
    fn the_form_media_type_is_compared_whole() {
        for yes in [
            "application/x-www-form-urlencoded",
            "Application/X-WWW-Form-URLEncoded",
            "application/x-www-form-urlencoded; charset=UTF-8",
            "application/x-www-form-urlencoded;charset=utf-8",
            " application/x-www-form-urlencoded ; charset=utf-8",
        ] {
            assert!(is_form_media_type(yes), "{yes:?}");
        }
        for no in [
            "application/x-www-form-urlencodedXYZ",
            "application/x-www-form-urlencoded-evil; charset=utf-8",
            "application/x-www-form-urlencoded/json",
            "application/x-www-form",
            "application/json",
            "multipart/form-data",
            "",
        ] {
            assert!(!is_form_media_type(no), "{no:?}");
        }
    }
}
