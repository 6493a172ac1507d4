//! The OpenAPI document of the administration API, generated from the handlers' annotations and the
//! request and response types (docs/admin-api.md). What every operation under `/admin/v1` shares — the
//! bearer token, the refusals of the guard (400, 401, 403, 429, 503) and the rate-limit headers of every
//! answer — is added once by `Shared` rather than repeated on each handler.

use common::error::ErrorBody;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, RefOr, ResponseBuilder, Schema};
use utoipa::{Modify, OpenApi, PartialSchema};

use crate::routes::{audit, clients, roles, users};
use crate::schema;

/// The document `GET /openapi.json` serves, with the operational endpoints every service has.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut document = AdminApi::openapi();
    let schemas = &mut document
        .components
        .get_or_insert_with(Default::default)
        .schemas;
    if let Some(RefOr::T(Schema::Object(client))) = schemas.get_mut("ClientInput") {
        *client = common::http::with_keyword(
            client.clone(),
            "allOf",
            crate::routes::clients::body::cross_field_rules(),
        );
    }
    common::http::with_operational_endpoints(document)
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Speech platform administration API",
        version = "1.0.0",
        description = "Users, roles, OAuth clients and the audit log of the caller's company under \
            /admin/v1. Bearer tokens of the token service; the company is always the token's. Limits per \
            calling account (429 with Retry-After and X-RateLimit-* headers); requests running too long are \
            cut off (503 request_timeout). Request bodies refuse unknown fields and keys given twice; errors \
            name the field path, e.g. roles.extra_roles[1]. See docs/admin-api.md."
    ),
    paths(
        users::list, users::create, users::get, users::replace, users::delete,
        roles::list, roles::create, roles::get, roles::replace, roles::delete,
        clients::list, clients::create, clients::get, clients::replace, clients::delete,
        clients::rotate_secret,
        audit::list,
    ),
    components(schemas(ErrorBody)),
    modifiers(&Shared),
    tags(
        (name = "users", description = "User records (Manage Users)"),
        (name = "roles", description = "Roles and their permissions (Manage Roles)"),
        (name = "clients", description = "OAuth clients (Manage Clients)"),
        (name = "audit", description = "The audit log (View Audit Log)"),
    )
)]
struct AdminApi;

/// The rate-limit headers of every counted answer.
const RATE_LIMIT_HEADERS: &[(&str, &str)] = &[
    (
        "X-RateLimit-Limit",
        "Requests allowed per second for the calling account",
    ),
    (
        "X-RateLimit-Remaining",
        "Requests left in the current second",
    ),
    (
        "X-RateLimit-Reset",
        "Seconds until the one-second window resets",
    ),
    ("X-RateLimit-Limit-Day", "Requests allowed per UTC day"),
    ("X-RateLimit-Remaining-Day", "Requests left today (UTC)"),
    ("X-RateLimit-Reset-Day", "Seconds until 00:00 UTC"),
];

/// The refusals any operation under /admin/v1 may answer, before or besides its own.
const SHARED_RESPONSES: &[(&str, &str, &str)] = &[
    ("400", "BadRequest", "Invalid request; `field` names the offending field path or query parameter (invalid_field, invalid_limit, invalid_cursor, bad_request)"),
    ("401", "Unauthorized", "Missing, invalid, expired or revoked bearer token (missing_token, invalid_token)"),
    ("403", "Forbidden", "The caller lacks a permission, API access, or a token of a client with administration access (forbidden, api_access_disabled)"),
    ("429", "TooManyRequests", "Over the per-second or daily limit of the calling account (rate_limited, daily_limit_reached); see Retry-After"),
    ("503", "Timeout", "The request was cut off (request_timeout) or a dependency is unavailable"),
];

struct Shared;

impl Modify for Shared {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        common::http::add_security_schemes(
            openapi,
            [(
                "bearer",
                common::http::bearer_scheme(
                    "An access token of the token service, of the company the API answers for",
                ),
            )],
        );
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, description) in RATE_LIMIT_HEADERS {
            components.headers.insert(
                name.to_string(),
                RefOr::T(
                    HeaderBuilder::new()
                        .schema(Some(schema::integer(None, None, None, false)))
                        .description(Some(*description))
                        .build(),
                ),
            );
        }
        for (_, name, description) in SHARED_RESPONSES {
            let mut response = ResponseBuilder::new().description(*description).content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(ErrorBody::schema()))
                    .build(),
            );
            if *name == "TooManyRequests" {
                response = response.header(
                    "Retry-After",
                    HeaderBuilder::new()
                        .schema(Some(schema::integer(None, None, None, false)))
                        .description(Some("Seconds to wait"))
                        .build(),
                );
            }
            components
                .responses
                .insert(name.to_string(), RefOr::T(response.build()));
        }
        for (path, item) in openapi.paths.paths.iter_mut() {
            if !path.starts_with("/admin/v1") {
                continue;
            }
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
            ];
            for operation in operations.into_iter().flatten() {
                shared(operation);
            }
        }
    }
}

/// Adds the bearer requirement, the shared refusals and the rate-limit headers to one operation.
fn shared(operation: &mut Operation) {
    operation.security = Some(vec![SecurityRequirement::new(
        "bearer",
        Vec::<String>::new(),
    )]);
    let responses = &mut operation.responses.responses;
    for (status, name, _) in SHARED_RESPONSES {
        responses
            .entry(status.to_string())
            .or_insert_with(|| RefOr::Ref(Ref::from_response_name(*name)));
    }
    for (status, response) in responses.iter_mut() {
        if let (true, RefOr::T(response)) = (status.starts_with('2'), response) {
            for (name, _) in RATE_LIMIT_HEADERS {
                response.headers.insert(
                    name.to_string(),
                    RefOr::Ref(Ref::new(format!("#/components/headers/{name}"))),
                );
            }
        }
    }
}

/// The documented pattern of the `cursor` of the listing at `path`.
#[cfg(test)]
pub fn cursor_pattern(path: &str) -> String {
    let doc = serde_json::to_value(document()).unwrap();
    doc["paths"][path]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "cursor")
        .unwrap()["schema"]["pattern"]
        .as_str()
        .unwrap()
        .to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// A write to an existing resource without If-Match is refused (428), so the document requires the
    /// header: a client generated from it always sends one.
    #[test]
    fn if_match_is_required_where_it_is_read() {
        let doc: Value = serde_json::to_value(super::document()).unwrap();
        let mut writes = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let parameters = operation["parameters"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if let Some(header) = parameters.iter().find(|p| p["name"] == "If-Match") {
                    assert_eq!(header["required"], true, "{method} {path}");
                    writes.push(format!("{method} {path}"));
                }
            }
        }
        writes.sort();
        assert_eq!(
            writes,
            [
                "delete /admin/v1/clients/{client_id}",
                "delete /admin/v1/roles/{name}",
                "delete /admin/v1/users/{username}",
                "post /admin/v1/clients/{client_id}/secret",
                "put /admin/v1/clients/{client_id}",
                "put /admin/v1/roles/{name}",
                "put /admin/v1/users/{username}",
            ]
        );
    }

    /// The client body carries the rules that tie its fields together, so a generated client does not
    /// send an authorization_code client without a redirect URI, and the like.
    #[test]
    fn the_client_body_states_its_cross_field_rules() {
        let doc: Value = serde_json::to_value(super::document()).unwrap();
        let rules = doc["components"]["schemas"]["ClientInput"]["allOf"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let fields: Vec<&str> = rules
            .iter()
            .map(|r| {
                r["then"]["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .next()
                    .unwrap()
                    .as_str()
            })
            .collect();
        assert_eq!(
            fields,
            ["redirect_uris", "grant_types", "grant_types"],
            "{rules:?}"
        );
        assert!(rules.iter().all(|r| r["if"]["required"].is_array()));
        // Each list refuses an item given twice.
        let client = &doc["components"]["schemas"]["ClientInput"]["properties"];
        for list in ["grant_types", "redirect_uris", "scopes"] {
            assert_eq!(
                client[list]["uniqueItems"], true,
                "{list}: {}",
                client[list]
            );
        }
    }

    /// Every `$ref` of the document names something the document defines.
    #[test]
    fn every_reference_resolves() {
        let doc: Value = serde_json::to_value(super::document()).unwrap();
        if std::env::var_os("PRINT_OPENAPI").is_some() {
            println!("{}", serde_json::to_string_pretty(&doc).unwrap());
        }
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        assert!(!refs.is_empty());
        for r in refs {
            let pointer = r.trim_start_matches('#');
            assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
        }
    }

    fn collect_refs(value: &Value, refs: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match (key.as_str(), v) {
                        ("$ref", Value::String(r)) => refs.push(r.clone()),
                        _ => collect_refs(v, refs),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
            _ => {}
        }
    }
}
