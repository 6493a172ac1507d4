//! The OpenAPI document of the ingestion API, generated from the handlers' annotations and the request
//! and response types (docs/ingest-api.md).

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
        common::http::add_security_schemes(
            openapi,
            [(
                "bearer",
                common::http::bearer_scheme(
                    "An access token of the token service, of the project's company",
                ),
            )],
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

    /// Every project operation documents the refusals it answers: 401 without a valid token, 403 without
    /// the scope, 400 for a bad body and 409 for a name taken where a body names the project.
    #[test]
    fn project_operations_document_their_refusals() {
        let document = serde_json::to_value(super::document()).unwrap();
        let paths = &document["paths"];
        let operations = [
            ("/v3/projects", "get", &["401", "403"][..]),
            ("/v3/projects", "post", &["400", "401", "403", "409"][..]),
            ("/v3/projects/{app_key}", "get", &["401", "403", "404"][..]),
            (
                "/v3/projects/{app_key}",
                "put",
                &["400", "401", "403", "404", "409"][..],
            ),
            (
                "/v3/projects/{app_key}",
                "delete",
                &["401", "403", "404"][..],
            ),
        ];
        for (path, method, statuses) in operations {
            let responses = &paths[path][method]["responses"];
            for status in statuses {
                assert!(responses[*status].is_object(), "{method} {path}: {status}");
            }
        }
    }

    /// Both `/track` paths declare the form and the JSON body with the event's shape (they were bare
    /// strings, which no client or fuzzer could build a request from).
    #[test]
    fn track_bodies_declare_the_form_and_the_event() {
        let document = serde_json::to_value(super::document()).unwrap();
        let schemas = &document["components"]["schemas"];
        for path in ["/v3/{app_key}/track", "/v2/{app_key}/track"] {
            let content = &document["paths"][path]["post"]["requestBody"]["content"];
            let form = &content["application/x-www-form-urlencoded"]["schema"]["$ref"];
            let json = &content["application/json"]["schema"]["$ref"];
            assert_eq!(form, "#/components/schemas/TrackForm", "{path}");
            assert_eq!(json, "#/components/schemas/TrackBatch", "{path}");
        }
        assert_eq!(
            schemas["TrackForm"]["properties"]["events"]["type"],
            "string"
        );
        let events = &schemas["TrackBatch"]["properties"]["events"];
        assert_eq!(events["maxItems"], 300);
        let event = &events["items"];
        assert_eq!(
            event["required"],
            serde_json::json!(["event_name", "user_id"])
        );
        assert!(event["additionalProperties"]["oneOf"].is_array(), "{event}");
    }

    /// The event listing's filters are optional query parameters (they were declared as required path
    /// parameters), `limit` with the bounds the service enforces; no two operations share an id (a client
    /// generator makes one method of each).
    #[test]
    fn parameters_are_where_and_what_the_service_reads() {
        let document = serde_json::to_value(super::document()).unwrap();
        let parameters = document["paths"]["/v3/{app_key}/events"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .clone();
        for name in ["from", "to", "event_name", "limit", "cursor"] {
            let p = parameters.iter().find(|p| p["name"] == name).expect(name);
            assert_eq!(p["in"], "query", "{p}");
            assert_ne!(p["required"], true, "{p}");
        }
        let limit = parameters.iter().find(|p| p["name"] == "limit").unwrap();
        assert_eq!(
            (&limit["schema"]["minimum"], &limit["schema"]["maximum"]),
            (&serde_json::json!(1), &serde_json::json!(1000)),
            "{limit}"
        );
        let mut ids: Vec<String> = document["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .filter_map(|op| op["operationId"].as_str().map(str::to_string))
            .collect();
        let count = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), count, "operation ids are unique: {ids:?}");
    }
}
