//! The OpenAPI document of the analytics API, generated from the handlers' annotations (the core's and
//! transcription's) and the request and response types (docs/analytics-api.md).

use utoipa::OpenApi;

use analytics_core::routes::{
    appmatches, apps, appstats, calls, config, metadata, phrases, rescoring, search, stats,
};
use scoring::names;
use transcription::routes::{callback_secret, jobs, transcribe};

/// The document `GET /openapi.json` serves, with the operational endpoints every service has. Every
/// operation of the API takes the access token in the `Authorization: Bearer` header or the `token` query
/// parameter (its annotation names the scope), and may be refused as any request of this API can be.
pub fn document() -> utoipa::openapi::OpenApi {
    use common::http::{add_common_responses, add_security_schemes, describe_path_names, PathName};
    let mut document = AnalyticsApi::openapi();
    add_security_schemes(
        &mut document,
        [
            (
                "bearer",
                common::http::bearer_scheme(
                    "An access token of the token service, of the company the path names: \
                     analytics:read for reads, analytics:write for changes",
                ),
            ),
            (
                "token",
                common::http::query_token_scheme("token", "The same access token, in the query"),
            ),
        ],
    );
    add_common_responses(
        &mut document,
        &[
            (
                "400",
                "A malformed request: an unknown or invalid query parameter, path or field, named in \
                 the message (text/html)",
            ),
            ("401", "No access token, or one not valid (text/html)"),
            (
                "403",
                "The token lacks the scope, or is of another company (text/html)",
            ),
        ],
        &[
            ("408", "The body did not arrive in time (text/html)"),
            ("413", "The body is larger than its limit (text/html)"),
        ],
    );
    describe_path_names(
        &mut document,
        &[
            PathName {
                name: "company",
                min: 1,
                max: common::jwt::MAX_COMPANY_LEN,
                pattern: names::COMPANY_PATTERN,
            },
            PathName {
                name: "organization",
                min: 1,
                max: names::MAX_NAME_LEN,
                pattern: names::NAME_PATTERN,
            },
            PathName {
                name: "folder",
                min: 1,
                max: names::MAX_NAME_LEN,
                pattern: names::NAME_PATTERN,
            },
            PathName {
                name: "app",
                min: 1,
                max: scoring::apps::definition::MAX_NAME_CHARS,
                pattern: names::APP_PATTERN,
            },
        ],
    );
    common::http::with_operational_endpoints(document)
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Speech platform analytics API",
        version = "1.0.0",
        description = "Configuration of companies, organizations and folders, calls added to folders, \
            their metadata, search, applications with their matches, and statistics per day. Every request carries an access token of the token service as the \
            `token` query parameter (or an Authorization: Bearer header): analytics:read for reads, \
            analytics:write for changes, and only for the token's own company. Errors are text/html. \
            See docs/analytics-api.md."
    ),
    paths(
        config::get_company, config::create_company, config::replace_company, config::delete_company,
        config::get_organization, config::create_organization, config::replace_organization,
        config::delete_organization,
        config::get_folder, config::create_folder, config::replace_folder, config::delete_folder,
        transcribe::folder::add_call,
        transcribe::direct::transcribe,
        transcribe::progress::progress,
        transcribe::progress::result,
        jobs::jobs,
        callback_secret::get_secret, callback_secret::rotate_secret,
        metadata::patch, metadata::delete,
        calls::call, calls::audio::audio,
        search::search, search::search_folder,
        apps::list_apps, apps::get_app, apps::put_app, apps::delete_app,
        rescoring::rescoring, phrases::check,
        appmatches::app_matches,
        stats::stats, stats::stats_folder, appstats::appstats, appstats::appstats_folder,
    ),
    tags(
        (name = "config", description = "Companies, organizations and folders"),
        (name = "calls", description = "Adding calls to folders and reading them"),
        (name = "transcription", description = "Transcribing recordings, with result callbacks signed with the company's callback secret"),
        (name = "metadata", description = "A call's metadata"),
        (name = "search", description = "Full-text search over calls"),
        (name = "apps", description = "Applications and where they matched a call"),
        (name = "stats", description = "Statistics of calls per day"),
    )
)]
struct AnalyticsApi;

#[cfg(test)]
mod tests {
    #[test]
    fn applications_and_their_matches_are_documented() {
        let document = super::document();
        let paths = &document.paths.paths;
        for path in [
            "/apps/{company}/{app}",
            "/appmatches/{company}/{organization}/{tId}",
        ] {
            assert!(paths.contains_key(path), "{path}");
        }
        let apps = &paths["/apps/{company}/{app}"];
        assert!(apps.get.is_some() && apps.put.is_some() && apps.delete.is_some());
        let schemas = &document.components.as_ref().unwrap().schemas;
        assert!(schemas.contains_key("AppRecord") && schemas.contains_key("AppMatches"));
    }

    /// Every operation of the API says how its token is sent (header or query, as security schemes a
    /// client generator and the docs UI's "Authorize" use) and documents the refusals of a token check;
    /// the operational endpoints need no token.
    #[test]
    fn every_operation_declares_its_token_and_its_refusals() {
        let document = serde_json::to_value(super::document()).unwrap();
        let schemes = &document["components"]["securitySchemes"];
        assert_eq!(schemes["bearer"]["scheme"], "bearer", "{schemes}");
        assert_eq!(
            (&schemes["token"]["in"], &schemes["token"]["name"]),
            (&"query".into(), &"token".into())
        );
        let mut operations = 0;
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let operational =
                    ["/healthz", "/readyz", "/metrics", "/openapi.json"].contains(&path.as_str());
                let security = &operation["security"];
                if operational {
                    assert!(security.is_null(), "{method} {path}: {security}");
                    continue;
                }
                operations += 1;
                let names: Vec<&str> = security
                    .as_array()
                    .unwrap_or_else(|| panic!("{method} {path} has no security"))
                    .iter()
                    .flat_map(|r| r.as_object().unwrap().keys())
                    .map(String::as_str)
                    .collect();
                assert_eq!(names, ["bearer", "token"], "{method} {path}");
                let parameters = operation["parameters"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                assert!(
                    parameters.iter().all(|p| p["name"] != "token"),
                    "{method} {path} declares the token as a parameter too"
                );
                for status in ["400", "401", "403"] {
                    assert!(
                        operation["responses"][status].is_object(),
                        "{method} {path} does not document {status}"
                    );
                }
            }
        }
        assert_eq!(operations, 36);
    }

    /// The phrase check answers `null` for a phrase that reads, and `/jobs` takes a `limit` of 1 to
    /// 200: the document says so, so a client (and the contract fuzzing) expects what the API does.
    #[test]
    fn the_phrase_check_and_the_jobs_say_what_they_take_and_answer() {
        let document = serde_json::to_value(super::document()).unwrap();
        let items = &document["paths"]["/phrases/{company}"]["post"]["responses"]["200"]["content"]
            ["application/json"]["schema"]["items"];
        assert!(items.to_string().contains("\"null\""), "{items}");
        let limit = document["paths"]["/jobs/{company}"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "limit")
            .unwrap()["schema"]
            .clone();
        assert_eq!(
            (&limit["minimum"], &limit["maximum"]),
            (&1.into(), &200.into()),
            "{limit}"
        );
    }

    /// The bounds the query checks enforce are in the document, so a client keeps within them.
    #[test]
    fn query_bounds_are_documented() {
        let document = serde_json::to_value(super::document()).unwrap();
        let parameter = |path: &str, name: &str| {
            document["paths"][path]["get"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == name)
                .unwrap()["schema"]
                .clone()
        };
        for path in [
            "/search/{company}/{organization}",
            "/search/{company}/{organization}/{folder}",
        ] {
            let limit = parameter(path, "limit");
            assert_eq!(
                (limit["minimum"].as_f64(), limit["maximum"].as_f64()),
                (Some(1.0), Some(common::search::MAX_LIMIT as f64)),
                "{path}: {limit}"
            );
        }
        for path in [
            "/appstats/{company}/{organization}/{app}",
            "/appstats/{company}/{organization}/{app}/{folder}",
        ] {
            let depth = parameter(path, "depth");
            assert_eq!(depth["minimum"].as_f64(), Some(-1.0), "{path}: {depth}");
        }
    }

    /// Every name in a path has the rule the service checks it by (names.rs holds the two together).
    #[test]
    fn path_names_have_their_rules() {
        let document = serde_json::to_value(super::document()).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                for p in operation["parameters"].as_array().into_iter().flatten() {
                    let pattern = match p["name"].as_str().unwrap() {
                        "company" => scoring::names::COMPANY_PATTERN,
                        "organization" | "folder" => scoring::names::NAME_PATTERN,
                        "app" => scoring::names::APP_PATTERN,
                        _ => continue,
                    };
                    assert_eq!(p["schema"]["pattern"], pattern, "{method} {path}: {p}");
                    assert_eq!(p["schema"]["minLength"], 1, "{method} {path}: {p}");
                    seen.insert(p["name"].as_str().unwrap().to_string());
                }
            }
        }
        assert_eq!(seen.len(), 4, "{seen:?}");
    }

    /// The upload forms declare their fields (they were a bare object), the folder's with `metadata`.
    #[test]
    fn upload_forms_declare_their_fields() {
        let document = serde_json::to_value(super::document()).unwrap();
        for (path, form, metadata) in [
            ("/transcribe", "TranscribeForm", false),
            (
                "/transcribe/{company}/{organization}/{folder}",
                "AddCallForm",
                true,
            ),
        ] {
            let content = &document["paths"][path]["post"]["requestBody"]["content"];
            let reference = &content["multipart/form-data"]["schema"]["$ref"];
            assert_eq!(reference, &format!("#/components/schemas/{form}"), "{path}");
            let schema = &document["components"]["schemas"][form];
            let fields = schema["properties"].as_object().unwrap();
            for field in ["file", "token", "output", "callback", "attempts", "diarize"] {
                assert!(fields.contains_key(field), "{form}: {field}");
            }
            assert_eq!(fields.contains_key("metadata"), metadata, "{form}");
            assert_eq!(schema["required"], serde_json::json!(["file"]), "{form}");
            assert_eq!(schema["additionalProperties"], false, "{form}");
        }
    }

    /// `/appmatches` reads its JSON body when there is one: the document does not make clients send one.
    #[test]
    fn the_body_of_appmatches_is_optional() {
        let document = serde_json::to_value(super::document()).unwrap();
        let body =
            &document["paths"]["/appmatches/{company}/{organization}/{tId}"]["get"]["requestBody"];
        assert!(body.is_object(), "{body}");
        assert_ne!(body["required"], true, "{body}");
    }

    #[test]
    fn the_callback_secret_is_documented() {
        let document = super::document();
        let secret = &document.paths.paths["/callbacks/{company}/secret"];
        assert!(secret.get.is_some() && secret.post.is_some());
        let schemas = &document.components.as_ref().unwrap().schemas;
        assert!(schemas.contains_key("SecretRecord"));
    }
}
