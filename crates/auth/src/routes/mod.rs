//! The token service's endpoints, all under `/oauth/<company>`: their routes, the body limit and the
//! server's own refusals in the OAuth error format. What several endpoints read is in `request`.

pub(crate) mod authorize;
pub(crate) mod discovery;
pub(crate) mod introspect;
pub(crate) mod logout;
mod request;
pub(crate) mod revoke;
pub(crate) mod token;
pub(crate) mod userinfo;

use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{web, HttpResponse};

/// The largest body an OAuth endpoint reads.
pub const MAX_BODY: usize = 64 * 1024;

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
