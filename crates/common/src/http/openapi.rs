//! The OpenAPI part every service shares: the operational endpoints `serve` routes. A service generates
//! its own document from its handlers and types and adds this part with `with_operational_endpoints`, so
//! the document it serves lists every route the server has.

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
