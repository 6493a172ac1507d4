//! The OpenAPI document of the token service, generated from the handlers' annotations and the types
//! below (docs/token-service.md). The endpoints read `application/x-www-form-urlencoded` bodies and query
//! strings through `form::Params` (RFC 6749: empty values count as absent, repeated ones are refused);
//! the structs here are their documented shapes, one per form, enumerating exactly the values the
//! handlers accept.

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};

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
    // RFC 6749, section 3.1: a parameter the endpoint does not know is ignored, but no parameter may
    // come twice, so an extra one is a single string.
    if let Some(components) = document.components.as_mut() {
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

/// The company every endpoint belongs to.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct CompanyPath {
    /// The company's short name.
    company: String,
}

/// The grants of the token endpoint.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum GrantType {
    ClientCredentials,
    AuthorizationCode,
    RefreshToken,
}

/// The form of `POST /oauth/{company}/token`. The client authenticates with HTTP Basic or with
/// `client_id` and `client_secret` in the form (public clients: `client_id` only, with PKCE). The form
/// also takes the other spelling of three fields, one spelling per field (both is 400): `clientId`,
/// `clientSecret` and `redirect_uri`. A field sent empty counts as left out (RFC 6749, section 3.1).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TokenForm {
    grant_type: GrantType,
    /// Form authentication, or the id of a public client (or `clientId`).
    client_id: Option<String>,
    /// Form authentication (or `clientSecret`).
    client_secret: Option<String>,
    /// authorization_code: the code.
    code: Option<String>,
    /// authorization_code: the redirect URI of the authorization request (or `redirect_uri`).
    #[schema(rename = "redirectURI")]
    redirect_uri: Option<String>,
    /// authorization_code: the PKCE verifier.
    code_verifier: Option<String>,
    /// refresh_token: the refresh token.
    refresh_token: Option<String>,
    /// Requested scope (space separated).
    scope: Option<String>,
}

/// The login form of `POST /oauth/{company}/authorize`; the query string of the GET is kept.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct LoginForm {
    username: String,
    password: String,
    /// The form's CSRF token, matching its pre-login cookie.
    csrf: String,
}

/// The form of `POST /oauth/{company}/introspect` and `/revoke`. The client authenticates with HTTP Basic
/// or, instead (one method, not both), with `client_id` and `client_secret` in this form, as at the token
/// endpoint (`clientId` and `clientSecret` are taken too, one spelling per field).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TokenReferenceForm {
    #[schema(min_length = 1)]
    token: String,
    /// `access_token` or `refresh_token`: where to look first. The token is found whatever the value,
    /// and an unknown one is ignored (RFC 7009, section 2.1).
    #[schema(example = "refresh_token")]
    token_type_hint: Option<String>,
}

/// The parameters of the end-session endpoint, in the query (GET) or a form body (POST).
#[derive(ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct LogoutForm {
    /// The client whose registered redirect URI post_logout_redirect_uri must be.
    client_id: Option<String>,
    /// Where to send the browser afterwards; only a registered redirect URI of the client.
    post_logout_redirect_uri: Option<String>,
    /// Echoed on the redirect.
    state: Option<String>,
    /// Accepted and ignored.
    id_token_hint: Option<String>,
}

/// `response_type` of the authorization request: only the code flow.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum ResponseType {
    Code,
}

/// `prompt` of the authorization request.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum Prompt {
    None,
    Login,
}

/// `code_challenge_method`: only S256.
#[derive(ToSchema)]
#[allow(dead_code)]
pub enum CodeChallengeMethod {
    S256,
}

/// The query of the authorization request.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct AuthorizeQuery {
    #[param(min_length = 1)]
    client_id: String,
    #[param(inline)]
    response_type: ResponseType,
    /// A redirect URI registered for the client, character for character.
    #[param(min_length = 1)]
    redirect_uri: String,
    state: Option<String>,
    /// Space separated: openid, profile, email, phone, refreshToken.
    scope: Option<String>,
    nonce: Option<String>,
    /// PKCE challenge (required for public clients).
    code_challenge: Option<String>,
    #[param(inline)]
    code_challenge_method: Option<CodeChallengeMethod>,
    #[param(inline)]
    prompt: Option<Prompt>,
    /// Seconds: an older login session needs a new login.
    #[param(minimum = 0)]
    max_age: Option<i64>,
}

/// A JSON Web Key Set.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct Jwks {
    keys: Vec<Jwk>,
}

/// A published public key: Ed25519 (`OKP`, EdDSA) for access tokens, RSA (RS256) for ID tokens.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct Jwk {
    kty: String,
    kid: String,
    alg: String,
    #[schema(rename = "use")]
    key_use: String,
    crv: Option<String>,
    x: Option<String>,
    n: Option<String>,
    e: Option<String>,
}

/// RFC 7662 introspection: `{"active": false}` for tokens that are unknown, expired, revoked or not the
/// caller's; the other fields only for active tokens.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct Introspection {
    active: bool,
    /// `Bearer` or `refresh_token`.
    token_type: Option<String>,
    scope: Option<String>,
    client_id: Option<String>,
    sub: Option<String>,
    username: Option<String>,
    aud: Option<String>,
    iss: Option<String>,
    exp: Option<i64>,
    iat: Option<i64>,
    jti: Option<String>,
    company: Option<String>,
}

/// The signed-in user's claims (OpenID Connect Core 5.3), by the scopes of the token.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UserInfo {
    sub: String,
    preferred_username: Option<String>,
    name: Option<String>,
    given_name: Option<String>,
    family_name: Option<String>,
    updated_at: Option<i64>,
    email: Option<String>,
    email_verified: Option<bool>,
    phone_number: Option<String>,
    phone_number_verified: Option<bool>,
}
