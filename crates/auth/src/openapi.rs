//! The OpenAPI document of the token service (docs/token-service.md), generated from the handlers'
//! annotations and the types they read and answer, which live beside them: the forms and queries they
//! read through `form::Params` (RFC 6749: empty values count as absent, repeated ones are refused) and the
//! bodies they build. What derives cannot say is patched in here: the optional end-session form, the
//! client's form credentials at the token endpoint, and the extra parameters every form ignores.

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{Modify, OpenApi, PartialSchema};

use crate::client_auth::FormCredentials;
use crate::routes::{authorize, discovery, introspect, logout, revoke, token, userinfo};

/// The document `GET /openapi.json` serves, with the operational endpoints every service has.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut document = AuthApi::openapi();
    // Every field of the end-session form is optional, and so is the form itself.
    if let Some(RefOr::T(body)) = document
        .paths
        .paths
        .get_mut("/oauth/{company}/logout")
        .and_then(|item| item.post.as_mut())
        .and_then(|post| post.request_body.as_mut())
    {
        body.required = Some(utoipa::openapi::Required::False);
    }
    if let Some(components) = document.components.as_mut() {
        // The token form lists the credentials a client may send in it; the introspection and
        // revocation form names them in its description only.
        if let (Some(RefOr::T(Schema::Object(form))), RefOr::T(Schema::Object(credentials))) = (
            components.schemas.get_mut("TokenForm"),
            FormCredentials::schema(),
        ) {
            form.properties.extend(credentials.properties);
        }
        // RFC 6749, section 3.1: a parameter the endpoint does not know is ignored, but no parameter may
        // come twice, so an extra one is a single string.
        for form in ["TokenForm", "TokenReferenceForm", "LogoutForm", "LoginForm"] {
            if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(form) {
                let text = ObjectBuilder::new().schema_type(Type::String).build();
                object.additional_properties = Some(Box::new(AdditionalProperties::RefOr(
                    RefOr::T(Schema::Object(text)),
                )));
            }
        }
    }
    common::http::with_operational_endpoints(document)
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Speech platform token service",
        version = "1.0.0",
        description = "OAuth 2.0 / OpenID Connect token service. Every endpoint is per company under \
            /oauth/{company}. Bodies are application/x-www-form-urlencoded; a parameter given twice is \
            refused. See docs/token-service.md."
    ),
    paths(
        token::token,
        authorize::show, authorize::submit,
        discovery::openid_configuration, discovery::jwks,
        userinfo::userinfo,
        introspect::introspect,
        revoke::revoke,
        logout::logout_get, logout::logout_post,
    ),
    modifiers(&Security),
    tags(
        (name = "oauth", description = "Tokens, introspection and revocation (RFC 6749, 7662, 7009)"),
        (name = "login", description = "The browser's authorization-code flow and its session"),
        (name = "discovery", description = "OpenID Connect discovery and signing keys"),
    )
)]
struct AuthApi;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use common::http::{add_security_schemes, basic_scheme, bearer_scheme};
        add_security_schemes(
            openapi,
            [
                ("basic", basic_scheme("A client's id and secret")),
                ("bearer", bearer_scheme("An access token of this service")),
            ],
        );
    }
}
