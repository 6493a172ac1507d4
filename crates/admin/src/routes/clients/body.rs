//! The client body of POST and PUT `/admin/v1/clients`: a typed struct serde reads (unknown fields and
//! wrong types are refused with their path by `StrictJson`), then `validate` for what serde cannot say.
//! Every limit is one constant, used by the check and by the field's schema.

use std::sync::LazyLock;

use common::ApiError;
use directory::{grants, scopes, ClientSpec, OAuthClient};
use regex::Regex;
use serde::de::IgnoredAny;
use serde::Deserialize;
use utoipa::openapi::schema::{ArrayBuilder, Object};
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

use crate::api::{text, texts};
use crate::schema;

/// At most this many characters in a client's name, each grant or scope, and each redirect URI.
pub const NAME_MAX: usize = 100;
pub const ITEM_MAX: usize = 64;
pub const REDIRECT_URI_MAX: usize = 2000;
/// Token lifetimes in seconds.
pub const MIN_TTL: i64 = 60;
pub const MAX_ACCESS_TTL: i64 = directory::MAX_ACCESS_TOKEN_TTL;
/// Ten years: longer is what `null` (unlimited) says.
pub const MAX_REFRESH_TTL: i64 = 315_360_000;

/// A name is not blank: it has a character other than white space (and, as all text, no control
/// character or bidirectional override).
pub const NAME_PATTERN: &str = concat!(
    "^[^",
    schema::deceptive!(),
    r"]*[^\s",
    schema::deceptive!(),
    "][^",
    schema::deceptive!(),
    "]*$"
);
static NON_BLANK: LazyLock<Regex> = LazyLock::new(|| schema::compile(NAME_PATTERN));

/// A client as POST and PUT take it. The read-only parts of the record are accepted (and ignored), so
/// that a GET result can be sent back as it is; anything else unknown is refused, naming the field.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ClientInput)]
pub struct ClientBody {
    #[schema(required = true, schema_with = name_schema)]
    name: Option<String>,
    /// Only read on POST: a public client has no secret, must use PKCE and cannot have
    /// client_credentials; it cannot be switched later.
    #[schema(default = false)]
    public: Option<bool>,
    #[schema(required = true, schema_with = grant_types_schema)]
    grant_types: Option<Vec<String>>,
    /// Absolute URLs without a fragment; at least one with authorization_code.
    #[schema(schema_with = redirect_uris_schema)]
    redirect_uris: Option<Vec<String>>,
    /// API scopes of client-credentials tokens.
    #[schema(schema_with = scopes_schema)]
    scopes: Option<Vec<String>>,
    /// Issue refresh tokens; needs the refresh_token grant.
    #[schema(default = false)]
    issue_refresh_token: Option<bool>,
    #[serde(default, deserialize_with = "common::whole::optional")]
    #[schema(schema_with = access_token_ttl_schema)]
    access_token_ttl: Option<i64>,
    /// Null or left out: unlimited.
    #[serde(default, deserialize_with = "common::whole::optional")]
    #[schema(schema_with = refresh_token_ttl_schema)]
    refresh_token_ttl: Option<i64>,
    /// Whether user tokens issued to this client may call the administration API.
    #[schema(default = false)]
    admin_access: Option<bool>,
    /// Read-only: on PUT it must match the path when given.
    #[schema(read_only)]
    client_id: Option<String>,
    #[serde(rename = "secret_rotated_on")]
    #[schema(schema_with = secret_rotated_on_schema)]
    _secret_rotated_on: Option<IgnoredAny>,
    #[serde(rename = "_system_properties")]
    #[schema(schema_with = system_properties_schema)]
    _system_properties: Option<IgnoredAny>,
    #[serde(rename = "_allowed")]
    #[schema(schema_with = allowed_schema)]
    _allowed: Option<IgnoredAny>,
}

/// The rules of a client body that tie one field to another, as JSON Schema conditionals (utoipa has no
/// words for them), each the document's form of a check of `validate`: the authorization_code grant
/// needs a redirect URI, a public client has no client_credentials grant, and issuing refresh tokens
/// needs the refresh_token grant.
pub fn cross_field_rules() -> serde_json::Value {
    let has = |grant: &str| serde_json::json!({"contains": {"const": grant}});
    serde_json::json!([
        {
            "if": {"properties": {"grant_types": has(grants::AUTHORIZATION_CODE)}, "required": ["grant_types"]},
            "then": {"properties": {"redirect_uris": {"type": "array", "minItems": 1}}, "required": ["redirect_uris"]}
        },
        {
            "if": {"properties": {"public": {"const": true}}, "required": ["public"]},
            "then": {"properties": {"grant_types": {"not": has(grants::CLIENT_CREDENTIALS)}}}
        },
        {
            "if": {"properties": {"issue_refresh_token": {"const": true}}, "required": ["issue_refresh_token"]},
            "then": {"properties": {"grant_types": has(grants::REFRESH_TOKEN)}, "required": ["grant_types"]}
        }
    ])
}

fn name_schema() -> Object {
    let mut name = schema::text::<NAME_MAX>();
    name.pattern = Some(NAME_PATTERN.into());
    name.examples = vec!["Reporting app".into()];
    name
}

/// Each grant once.
fn grant_types_schema() -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(schema::one_of(grants::ALL, false))
        .min_items(Some(1))
        .unique_items(true)
        .into()
}

fn redirect_uris_schema() -> RefOr<Schema> {
    let mut uri = schema::text::<REDIRECT_URI_MAX>();
    uri.format = Some(utoipa::openapi::SchemaFormat::Custom("uri".into()));
    uri.examples = vec!["https://app.example.com/callback".into()];
    schema::unique_list_of(uri, 0, true)
}

fn scopes_schema() -> RefOr<Schema> {
    schema::unique_list_of(schema::one_of(scopes::ALL, false), 0, true)
}

fn access_token_ttl_schema() -> Object {
    schema::integer(
        Some(MIN_TTL),
        Some(MAX_ACCESS_TTL),
        Some(directory::DEFAULT_ACCESS_TOKEN_TTL),
        true,
    )
}

fn refresh_token_ttl_schema() -> Object {
    schema::integer(Some(MIN_TTL), Some(MAX_REFRESH_TTL), None, true)
}

/// Why a redirect URI cannot be registered, if it cannot: it must be absolute, without a fragment or
/// credentials, and use https unless it points at this machine (loopback, for tools run locally) or is
/// an application's own scheme (a native application); a code sent over plain http to another host could
/// be read on the way.
fn check_redirect_uri(uri: &str) -> Result<(), &'static str> {
    let url = url::Url::parse(uri)
        .ok()
        .filter(|u| !u.cannot_be_a_base() && u.fragment().is_none())
        .ok_or("must be an absolute URL without a fragment")?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not hold a user name or password");
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if url.scheme() == "http" && !loopback {
        return Err("must use https, unless it points at localhost or a loopback address");
    }
    Ok(())
}

/// Refuses item `i` of the list `field` when an earlier item is the same.
fn listed_once(field: &str, items: &[String], i: usize) -> Result<(), ApiError> {
    let item = &items[i];
    if items[..i].contains(item) {
        return Err(ApiError::field(
            format!("{field}[{i}]"),
            format!("{field}[{i}]: {item} is listed twice"),
        ));
    }
    Ok(())
}

fn secret_rotated_on_schema() -> Object {
    schema::ignored("Read-only, ignored")
}

fn system_properties_schema() -> Object {
    schema::ignored("Read-only (the record's system properties), ignored")
}

fn allowed_schema() -> Object {
    schema::ignored("Read-only (the record's allowed methods), ignored")
}

impl ClientBody {
    /// The `client_id` given, which on PUT must name the client of the path.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The rules serde cannot express: required fields, lengths, known and unrepeated grants and scopes,
    /// redirect URIs, lifetimes and the rules between fields. `public` is only read on creation
    /// (`existing` is `None`).
    pub fn validate(self, existing: Option<&OAuthClient>) -> Result<ClientSpec, ApiError> {
        let name = self
            .name
            .ok_or_else(|| ApiError::field("name", "name is required"))?;
        text("name", &name, NAME_MAX)?;
        if !NON_BLANK.is_match(&name) {
            return Err(ApiError::field("name", "name must not be blank"));
        }
        let public = match existing {
            None => self.public.unwrap_or(false),
            Some(c) => {
                if self.public.is_some_and(|p| p != c.is_public()) {
                    return Err(ApiError::field(
                        "public",
                        "a client cannot switch between public and confidential; create a new one",
                    ));
                }
                c.is_public()
            }
        };
        let grant_types = self.grant_types.ok_or_else(|| {
            ApiError::field(
                "grant_types",
                format!(
                    "grant_types is required: a list of {}",
                    grants::ALL.join(", ")
                ),
            )
        })?;
        texts("grant_types", &grant_types, ITEM_MAX)?;
        if grant_types.is_empty() {
            return Err(ApiError::field(
                "grant_types",
                "grant_types must name at least one grant",
            ));
        }
        for (i, g) in grant_types.iter().enumerate() {
            if !grants::ALL.contains(&g.as_str()) {
                return Err(ApiError::field(
                    format!("grant_types[{i}]"),
                    format!(
                        "grant_types[{i}]: unknown grant {g:?}; known are {}",
                        grants::ALL.join(", ")
                    ),
                ));
            }
            listed_once("grant_types", &grant_types, i)?;
        }
        let has = |g: &str| grant_types.iter().any(|x| x == g);
        if public && has(grants::CLIENT_CREDENTIALS) {
            return Err(ApiError::field(
                "grant_types",
                "a public client has no secret and cannot use client_credentials",
            ));
        }
        let redirect_uris = self.redirect_uris.unwrap_or_default();
        texts("redirect_uris", &redirect_uris, REDIRECT_URI_MAX)?;
        for (i, uri) in redirect_uris.iter().enumerate() {
            if let Err(why) = check_redirect_uri(uri) {
                return Err(ApiError::field(
                    format!("redirect_uris[{i}]"),
                    format!("redirect_uris[{i}] {why}"),
                ));
            }
            listed_once("redirect_uris", &redirect_uris, i)?;
        }
        if has(grants::AUTHORIZATION_CODE) && redirect_uris.is_empty() {
            return Err(ApiError::field(
                "redirect_uris",
                "the authorization_code grant needs at least one redirect URI",
            ));
        }
        let client_scopes = self.scopes.unwrap_or_default();
        texts("scopes", &client_scopes, ITEM_MAX)?;
        for (i, s) in client_scopes.iter().enumerate() {
            if !scopes::ALL.contains(&s.as_str()) {
                return Err(ApiError::field(
                    format!("scopes[{i}]"),
                    format!(
                        "scopes[{i}]: unknown scope {s:?}; known are {}",
                        scopes::ALL.join(", ")
                    ),
                ));
            }
            listed_once("scopes", &client_scopes, i)?;
        }
        let issue_refresh_token = self.issue_refresh_token.unwrap_or(false);
        if issue_refresh_token && !has(grants::REFRESH_TOKEN) {
            return Err(ApiError::field(
                "issue_refresh_token",
                "issue_refresh_token needs the refresh_token grant in grant_types",
            ));
        }
        let access_token_ttl = self
            .access_token_ttl
            .unwrap_or(directory::DEFAULT_ACCESS_TOKEN_TTL);
        if !(MIN_TTL..=MAX_ACCESS_TTL).contains(&access_token_ttl) {
            return Err(ApiError::field(
                "access_token_ttl",
                format!("access_token_ttl must be from {MIN_TTL} to {MAX_ACCESS_TTL} seconds"),
            ));
        }
        let refresh_token_ttl = self.refresh_token_ttl;
        if refresh_token_ttl.is_some_and(|t| !(MIN_TTL..=MAX_REFRESH_TTL).contains(&t)) {
            return Err(ApiError::field(
                "refresh_token_ttl",
                format!(
                    "refresh_token_ttl must be from {MIN_TTL} to {MAX_REFRESH_TTL} seconds (ten years), or null for unlimited"
                ),
            ));
        }
        Ok(ClientSpec {
            name,
            grant_types,
            redirect_uris,
            scopes: client_scopes,
            issue_refresh_token,
            access_token_ttl,
            refresh_token_ttl,
            public,
            admin_access: self.admin_access.unwrap_or(false),
        })
    }
}
