//! The OpenAPI document served at /openapi.json lists what the service routes: every documented operation
//! answers (not 404 or 405), with a status the document lists for it.

use serde_json::Value;

use crate::support::*;

async fn every_documented_operation_is_routed(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    auth.add_company("acme").await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let doc: Value = http
        .get(format!("{}/openapi.json", auth.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        doc,
        serde_json::from_str::<Value>(auth::OPENAPI).unwrap(),
        "the served document is the bundled one"
    );
    let paths = doc["paths"].as_object().expect("paths");
    assert_eq!(paths.len(), 12);
    let mut checked = 0;
    for (path, operations) in paths {
        let url = format!("{}{}", auth.url, path.replace("{company}", "acme"));
        for (method, operation) in operations.as_object().unwrap() {
            let request = match method.as_str() {
                "get" => http.get(&url),
                "post" => http
                    .post(&url)
                    .header("content-type", "application/x-www-form-urlencoded"),
                other => panic!("unexpected method {other} in the document"),
            };
            let status = request.send().await.unwrap().status().as_u16();
            assert!(
                status != 404 && status != 405,
                "{method} {path} is documented but answers {status}"
            );
            let documented = operation["responses"].as_object().unwrap();
            assert!(
                documented.contains_key(&status.to_string()),
                "{method} {path} answered {status}, not documented"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 15);
    let undocumented = http
        .delete(format!("{}/oauth/acme/token", auth.url))
        .send()
        .await
        .unwrap();
    assert!(matches!(undocumented.status().as_u16(), 404 | 405));
}

common::backend_tests!(every_documented_operation_is_routed);
