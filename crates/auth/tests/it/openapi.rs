//! The OpenAPI document served at /openapi.json is the generated one and lists what the service routes:
//! every documented operation answers (not 404 or 405), with a status the document lists for it, and
//! another method is 405 with `Allow`; the form
//! bodies are documented as schemas; and the docs UI at /docs/ is served whole by the service.

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
        serde_json::to_value(auth::openapi()).unwrap(),
        "the served document is the generated one"
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
    assert_eq!(undocumented.status().as_u16(), 405);
    assert_eq!(undocumented.headers()["allow"], "POST");
    let body: Value = undocumented.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request", "{body}");
}

/// Every body is a form, documented by a schema of its fields; the token form's grants are exactly the
/// ones the directory knows.
async fn form_bodies_are_documented_as_schemas(_backend: Backend) {
    let doc = serde_json::to_value(auth::openapi()).unwrap();
    let mut forms = 0;
    for (path, operations) in doc["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let Some(content) = operation["requestBody"]["content"].as_object() else {
                continue;
            };
            let keys: Vec<&String> = content.keys().collect();
            assert_eq!(
                keys,
                ["application/x-www-form-urlencoded"],
                "{method} {path}"
            );
            let reference = content["application/x-www-form-urlencoded"]["schema"]["$ref"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} names its form schema"));
            let name = reference.trim_start_matches("#/components/schemas/");
            assert!(
                doc["components"]["schemas"][name]["properties"].is_object(),
                "{name} lists its fields"
            );
            forms += 1;
        }
    }
    assert_eq!(forms, 5, "token, login, introspect, revoke, logout");
    for form in ["TokenForm", "TokenReferenceForm", "LogoutForm", "LoginForm"] {
        let extra = &doc["components"]["schemas"][form]["additionalProperties"];
        assert_eq!(
            extra["type"], "string",
            "{form}: an unknown parameter comes once"
        );
    }
    let logout = &doc["paths"]["/oauth/{company}/logout"]["post"]["requestBody"];
    assert_eq!(
        logout["required"], false,
        "the end-session form is optional"
    );
    let grant = &doc["components"]["schemas"]["GrantType"]["enum"];
    assert_eq!(grant, &serde_json::json!(directory::grants::ALL));
    let token_form = &doc["components"]["schemas"]["TokenForm"];
    assert_eq!(token_form["required"], serde_json::json!(["grant_type"]));
}

/// The served description of the token response says which grants answer `scope`, `refresh_token` and
/// `id_token`, as docs/token-service.md and the handlers do: `scope` and `id_token` in every authorization-code
/// response and nowhere else.
async fn the_token_response_fields_say_which_grants_answer_them(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let doc: serde_json::Value = reqwest::get(format!("{}/openapi.json", auth.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let fields = &doc["components"]["schemas"]["TokenResponse"]["properties"];
    let says = |field: &str| {
        fields[field]["description"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        says("scope"),
        "Only in authorization-code responses: the granted scope."
    );
    assert_eq!(
        says("id_token"),
        "In every authorization-code response, whatever the scope; never in the other grants."
    );
    assert!(!says("scope").contains("refresh"), "{}", says("scope"));
}

/// The Swagger UI at /docs/ comes from the service: the page, every script and style it loads and the
/// document it reads.
async fn the_docs_ui_is_served_by_the_service(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let page = reqwest::get(format!("{}/docs/", auth.url)).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(
        page.headers().get("content-security-policy").is_none(),
        "the login page's policy is not applied to the docs UI"
    );
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
        let url = format!("{}/docs/{}", auth.url, asset.trim_start_matches("./"));
        let answer = reqwest::get(&url).await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        assert!(!answer.bytes().await.unwrap().is_empty(), "{url}");
    }
}

common::backend_tests!(
    every_documented_operation_is_routed,
    form_bodies_are_documented_as_schemas,
    the_token_response_fields_say_which_grants_answer_them,
    the_docs_ui_is_served_by_the_service,
);
