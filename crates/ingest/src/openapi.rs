//! The OpenAPI document of the ingestion API, generated from the handlers' annotations and the request
//! and response types (docs/ingest-api.md).

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::routes::{events, projects, track};

/// The document `GET /openapi.json` serves, with the operational endpoints every service has.
pub fn document() -> utoipa::openapi::OpenApi {
    common::http::with_operational_endpoints(IngestApi::openapi())
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Speech platform event-ingestion API",
        version = "1.0.0",
        description = "Batches of tracking events sent to a project's app key, validated, enriched with \
            browser, operating system and place, and stored; read back and projects managed with a bearer \
            token of the project's company (events:read, events:manage). See docs/ingest-api.md."
    ),
    paths(
        track::track_v3, track::track_v2,
        events::list,
        projects::list, projects::create, projects::get, projects::replace, projects::delete,
    ),
    modifiers(&Bearer),
    tags(
        (name = "track", description = "Sending events"),
        (name = "events", description = "Reading stored events"),
        (name = "projects", description = "Projects and their app keys"),
    )
)]
struct IngestApi;

/// The bearer scheme the read and project routes name.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.security_schemes.insert(
            "bearer".into(),
            utoipa::openapi::RefOr::T(SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_route_is_documented() {
        let document = super::document();
        let paths = &document.paths.paths;
        for path in [
            "/v3/{app_key}/track",
            "/v2/{app_key}/track",
            "/v3/{app_key}/events",
            "/v3/projects",
            "/v3/projects/{app_key}",
        ] {
            assert!(paths.contains_key(path), "{path}");
        }
    }
}
