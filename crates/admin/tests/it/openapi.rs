//! The generated OpenAPI document matches the service: every documented operation is routed and answers
//! only statuses the document lists, every routed operation is documented, other methods are 405, and the
//! documented record shapes are the ones the service returns. The docs UI showing it is served whole by
//! the service, without a token.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::support::*;

const METHODS: &[&str] = &["get", "post", "put", "delete", "patch"];

fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if item.get(*method).is_some() {
                ops.insert((method.to_string(), path.clone()));
            }
        }
    }
    ops
}

fn required(doc: &Value, schema: &str) -> Vec<String> {
    let mut r: Vec<String> = doc["components"]["schemas"][schema]["required"]
        .as_array()
        .unwrap_or_else(|| panic!("{schema} has required fields"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    r.sort();
    r
}

async fn the_document_describes_exactly_what_is_routed(backend: Backend) {
    let w = World::new(backend).await;
    let served = read(
        reqwest::get(format!("{}/openapi.json", w.admin.url))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(served.status, 200);
    let doc = served.body;
    assert_eq!(doc, serde_json::to_value(admin::openapi()).unwrap());
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));

    // Every routed admin operation is documented, and every documented one is routed.
    let ops = documented(&doc);
    let routed: BTreeSet<(String, String)> = admin::routes::ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let documented_admin: BTreeSet<(String, String)> = ops
        .iter()
        .filter(|(_, p)| p.starts_with("/admin/v1"))
        .cloned()
        .collect();
    assert_eq!(documented_admin, routed);

    // Concrete resources for the path templates.
    let client = w
        .post(
            "/clients",
            json!({"name": "probe", "grant_types": ["client_credentials"]}),
        )
        .await;
    let client_id = client.body["client_id"].as_str().unwrap().to_string();
    let concrete = |path: &str| {
        path.replace("{username}", "root")
            .replace("{name}", "Administrator")
            .replace("{client_id}", &client_id)
    };

    let http = reqwest::Client::new();
    let paths: BTreeSet<&String> = ops.iter().map(|(_, p)| p).collect();
    for path in paths {
        for method in METHODS {
            let url = format!("{}{}", w.admin.url, concrete(path));
            let mut request = http
                .request(
                    reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                    url,
                )
                .bearer_auth(&w.token);
            if *method == "post" || *method == "put" || *method == "patch" {
                request = request.json(&json!({}));
            }
            let response = request.send().await.unwrap();
            let allow = response.headers().get("allow").cloned();
            let answer = read(response).await;
            let operation = &doc["paths"][path.as_str()][*method];
            if operation.is_null() {
                assert_eq!(
                    answer.status, 405,
                    "{method} {path} is not documented, so it must not be routed"
                );
                assert_eq!(
                    answer.body["code"], "method_not_allowed",
                    "{:?}",
                    answer.body
                );
                let mut documented: Vec<String> = METHODS
                    .iter()
                    .filter(|m| !doc["paths"][path.as_str()][**m].is_null())
                    .map(|m| m.to_uppercase())
                    .collect();
                let allow = allow.expect("a 405 says what is allowed");
                let mut allowed: Vec<String> = allow
                    .to_str()
                    .unwrap()
                    .split(", ")
                    .map(str::to_string)
                    .collect();
                allowed.sort();
                documented.sort();
                assert_eq!(allowed, documented, "Allow of {path}");
                continue;
            }
            let routing_404 = answer.status == 404 && answer.body.is_null();
            assert!(
                !routing_404 && answer.status != 405,
                "{method} {path} is documented but not routed ({})",
                answer.status
            );
            let status = answer.status.to_string();
            assert!(
                operation["responses"].get(&status).is_some(),
                "{method} {path} answered {status}, which the document does not list: {:?}",
                answer.body
            );
        }
    }

    // The documented shapes are the served ones.
    let user = w.get("/users/root").await;
    assert_eq!(keys(&user.body), required(&doc, "UserRecord"));
    assert_eq!(
        keys(&user.body["_system_properties"]),
        required(&doc, "UserSystemProperties")
    );
    assert_eq!(
        keys(&w.get("/roles/Administrator").await.body),
        required(&doc, "Role")
    );
    assert_eq!(
        keys(&w.get(&format!("/clients/{client_id}")).await.body),
        required(&doc, "Client")
    );
    let page = w.get("/users").await;
    assert_eq!(keys(&page.body), required(&doc, "UserPage"));
    let created = w
        .post(
            "/clients",
            json!({"name": "shown once", "grant_types": ["client_credentials"]}),
        )
        .await;
    let mut with_secret = required(&doc, "Client");
    with_secret.push("client_secret".into());
    with_secret.sort();
    assert_eq!(keys(&created.body), with_secret);
    let audit = w.get("/audit").await;
    assert_eq!(keys(&audit.body["items"][0]), required(&doc, "AuditEntry"));
    let error = w.get("/users?limit=500").await;
    let mut error_keys = required(&doc, "Error");
    error_keys.push("field".into());
    error_keys.sort();
    assert_eq!(keys(&error.body), error_keys);
}

/// The Swagger UI at /docs/ comes from the service: the page, every script and style it loads, and the
/// document it reads; none of it needs a token.
async fn the_docs_ui_is_served_by_the_service(backend: Backend) {
    let w = World::new(backend).await;
    let page = reqwest::get(format!("{}/docs/", w.admin.url))
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = page.text().await.unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );
    let assets: Vec<&str> = html
        .split(['"', '\''])
        .filter(|s| s.starts_with("./") && (s.ends_with(".js") || s.ends_with(".css")))
        .collect();
    assert!(assets.len() >= 3, "scripts and styles: {assets:?}");
    for asset in assets.iter().chain(&["./swagger-initializer.js"]) {
        let url = format!("{}/docs/{}", w.admin.url, asset.trim_start_matches("./"));
        let answer = reqwest::get(&url).await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        assert!(!answer.bytes().await.unwrap().is_empty(), "{url}");
    }
    let initializer = reqwest::get(format!("{}/docs/swagger-initializer.js", w.admin.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(initializer.contains("/openapi.json"), "{initializer}");
}

common::backend_tests!(
    the_document_describes_exactly_what_is_routed,
    the_docs_ui_is_served_by_the_service,
);
