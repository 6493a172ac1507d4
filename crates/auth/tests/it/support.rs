//! Small helpers shared by the test modules.

use serde_json::Value;

pub use auth::testing::{browser, full_client_spec, TestAuth, REDIRECT_URI};
pub use common::testing::Backend;

/// POSTs a form to the token endpoint with HTTP Basic client authentication.
pub async fn token_basic(
    auth: &TestAuth,
    company: &str,
    id: &str,
    secret: &str,
    form: &[(&str, &str)],
) -> (u16, Value, reqwest::header::HeaderMap) {
    let response = reqwest::Client::new()
        .post(auth.token_url(company))
        .basic_auth(id, Some(secret))
        .form(form)
        .send()
        .await
        .expect("token request");
    read(response).await
}

/// POSTs a form to the token endpoint (client credentials, if any, are form fields).
pub async fn token_form(
    auth: &TestAuth,
    company: &str,
    form: &[(&str, &str)],
) -> (u16, Value, reqwest::header::HeaderMap) {
    let response = reqwest::Client::new()
        .post(auth.token_url(company))
        .form(form)
        .send()
        .await
        .expect("token request");
    read(response).await
}

pub async fn read(response: reqwest::Response) -> (u16, Value, reqwest::header::HeaderMap) {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body, headers)
}

/// The keys of a JSON object, sorted.
pub fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}
