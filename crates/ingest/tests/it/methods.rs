//! A method a path does not answer is a 405 in this API's error format, with `Allow` listing the
//! methods its OpenAPI document gives the path.

use common::backend_tests;
use reqwest::Method;

use crate::support::{Backend, World};

backend_tests!(another_method_is_a_405_with_allow,);

async fn another_method_is_a_405_with_allow(backend: Backend) {
    let world = World::new(backend).await;
    let key = world.app_key.clone();
    for (method, path, allow) in [
        (Method::PATCH, "/v3/projects".to_string(), "GET, POST"),
        (
            Method::POST,
            format!("/v3/projects/{key}"),
            "GET, PUT, DELETE",
        ),
        (Method::GET, format!("/v3/{key}/track"), "POST"),
        (Method::GET, format!("/v2/{key}/track"), "POST"),
        (Method::DELETE, format!("/v3/{key}/events"), "GET"),
        (Method::PUT, "/healthz".to_string(), "GET"),
    ] {
        let response = world
            .http
            .request(method.clone(), world.url(&path))
            .bearer_auth(&world.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{method} {path}");
        assert_eq!(response.headers()["allow"], allow, "{method} {path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(
            body["code"], "method_not_allowed",
            "{method} {path}: {body}"
        );
    }
}
