//! The OpenAPI part every service shares: the operational endpoints `serve` routes. A service generates
//! its own document from its handlers and types and adds this part with `with_operational_endpoints`, so
//! the document it serves lists every route the server has.

use utoipa::openapi::response::Response;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;

use super::ops;

#[derive(OpenApi)]
#[openapi(
    paths(ops::healthz, ops::readyz, ops::metrics, ops::openapi),
    tags((name = "operations", description = "Health, readiness, metrics and this document; the docs UI is at /docs/"))
)]
struct OperationalEndpoints;

/// `service` with the operational endpoints added.
pub fn with_operational_endpoints(
    mut service: utoipa::openapi::OpenApi,
) -> utoipa::openapi::OpenApi {
    service.merge(OperationalEndpoints::openapi());
    service
}

/// The security scheme of an access token of the token service in the `Authorization: Bearer` header.
pub fn bearer_scheme(description: &str) -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("JWT")
            .description(Some(description))
            .build(),
    )
}

/// The security scheme of an access token in the query parameter `name`.
pub fn query_token_scheme(name: &str, description: &str) -> SecurityScheme {
    SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::with_description(
        name,
        description,
    )))
}

/// The security scheme of a client's id and secret in HTTP Basic authentication.
pub fn basic_scheme(description: &str) -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Basic)
            .description(Some(description))
            .build(),
    )
}

/// Adds `schemes` to the document's components.
pub fn add_security_schemes(
    document: &mut utoipa::openapi::OpenApi,
    schemes: impl IntoIterator<Item = (&'static str, SecurityScheme)>,
) {
    let components = document.components.get_or_insert_with(Default::default);
    for (name, scheme) in schemes {
        components.add_security_scheme(name, scheme);
    }
}

/// Adds to every operation of `document` the answers its service gives any request of its kind, where
/// the operation does not document them itself: `common`, and `with_body` for an operation that reads a
/// body. What an operation says of a status itself is kept.
pub fn add_common_responses(
    document: &mut utoipa::openapi::OpenApi,
    common: &[(&str, &str)],
    with_body: &[(&str, &str)],
) {
    for operation in operations_mut(document) {
        let body = operation.request_body.is_some();
        let extra = common
            .iter()
            .chain(with_body.iter().filter(|_| body))
            .copied();
        for (status, description) in extra {
            operation
                .responses
                .responses
                .entry(status.to_string())
                .or_insert_with(|| Response::new(description).into());
        }
    }
}

/// Every operation of `document` (the methods the services route).
fn operations_mut(
    document: &mut utoipa::openapi::OpenApi,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    document.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
    })
}

/// A path parameter's rule as a string schema: `min` to `max` characters matching `pattern`.
pub struct PathName {
    pub name: &'static str,
    pub min: usize,
    pub max: usize,
    pub pattern: &'static str,
}

/// Gives every path parameter of `document` named in `rules` its rule's schema, so that each operation
/// says what the service accepts in that segment rather than any string.
pub fn describe_path_names(document: &mut utoipa::openapi::OpenApi, rules: &[PathName]) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::RefOr;
    for operation in operations_mut(document) {
        for parameter in operation.parameters.iter_mut().flatten() {
            let RefOr::T(parameter) = parameter else {
                continue;
            };
            let Some(rule) = rules.iter().find(|r| r.name == parameter.name) else {
                continue;
            };
            if parameter.parameter_in != ParameterIn::Path {
                continue;
            }
            let schema = ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(rule.min))
                .max_length(Some(rule.max))
                .pattern(Some(rule.pattern))
                .build();
            parameter.schema = Some(RefOr::T(schema.into()));
        }
    }
}

/// `object` with a JSON Schema keyword that utoipa has no field for (`not`, `if`/`then`), as written.
pub fn with_keyword(
    mut object: utoipa::openapi::schema::Object,
    keyword: &str,
    value: serde_json::Value,
) -> utoipa::openapi::schema::Object {
    object
        .extensions
        .get_or_insert_with(Default::default)
        .insert(keyword.to_string(), value);
    object
}
