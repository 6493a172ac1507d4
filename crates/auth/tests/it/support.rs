//! Small helpers shared by the test modules.

use serde_json::Value;

pub use auth::testing::{browser, full_client_spec, parse_redirect, TestAuth, REDIRECT_URI};
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

// ---- The authorization-code flow: a company, a confidential client, a user and the calls around them.

pub use auth::testing::Redirected;
pub use directory::{ClientSpec, User};

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

pub const USERNAME: &str = "alice";
pub const PASSWORD: &str = "correct horse battery staple";
/// The generic message of a refused login.
pub const FAILED_LOGIN: &str =
    "Invalid username or password, or the account is locked after repeated failures.";

/// A token service with company `acme`, a confidential client allowed every grant and user alice.
pub struct Setup {
    pub auth: TestAuth,
    pub client_id: String,
    pub secret: String,
    pub user: User,
}

pub async fn setup(backend: Backend) -> Setup {
    setup_with(TestAuth::start(backend).await, full_client_spec()).await
}

pub async fn setup_with(auth: TestAuth, spec: ClientSpec) -> Setup {
    auth.add_company("acme").await;
    let (client, secret) = auth.add_client("acme", spec).await;
    let user = auth.add_user("acme", USERNAME, PASSWORD).await;
    Setup {
        auth,
        client_id: client.client_id,
        secret: secret.unwrap_or_default(),
        user,
    }
}

/// Signs alice in at acme with a fresh browser and returns the redirect; panics when there is none.
pub async fn authorize(auth: &TestAuth, client_id: &str, query: &[(&str, &str)]) -> Redirected {
    match auth
        .log_in(&browser(), "acme", client_id, USERNAME, PASSWORD, query)
        .await
    {
        Ok(redirected) => redirected,
        Err(response) => {
            let status = response.status();
            let location = location(response.headers());
            panic!(
                "no code: {status} {location:?} {}",
                response.text().await.unwrap_or_default()
            )
        }
    }
}

/// Exchanges a code at acme with the client credentials as form fields (as docs/token-service.md shows);
/// `extra` carries the redirect URI (under either spelling) and anything else.
pub async fn exchange(
    auth: &TestAuth,
    client_id: &str,
    secret: Option<&str>,
    code: &str,
    extra: &[(&str, &str)],
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut form = vec![
        ("client_id", client_id),
        ("grant_type", "authorization_code"),
        ("code", code),
    ];
    if let Some(secret) = secret {
        form.push(("client_secret", secret));
    }
    form.extend_from_slice(extra);
    token_form(auth, "acme", &form).await
}

/// Exchanges a code with `redirectURI`, the spelling the platform's clients use.
pub async fn exchange_code(s: &Setup, code: &str) -> (u16, Value, reqwest::header::HeaderMap) {
    exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        code,
        &[("redirectURI", REDIRECT_URI)],
    )
    .await
}

/// Signs in and exchanges the code; asserts success and returns the token response.
pub async fn tokens(s: &Setup, query: &[(&str, &str)]) -> Value {
    let code = authorize(&s.auth, &s.client_id, query).await.code;
    let (status, body, _) = exchange_code(s, &code).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The refresh grant at acme with the client credentials as form fields.
pub async fn refresh(
    auth: &TestAuth,
    client_id: &str,
    secret: &str,
    refresh_token: &str,
) -> (u16, Value, reqwest::header::HeaderMap) {
    token_form(
        auth,
        "acme",
        &[
            ("client_id", client_id),
            ("client_secret", secret),
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ],
    )
    .await
}

/// Introspects `token` at acme, the client authenticated with HTTP Basic.
pub async fn introspect(
    auth: &TestAuth,
    client_id: &str,
    secret: &str,
    token: &str,
) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/introspect", auth.issuer("acme")))
        .basic_auth(client_id, Some(secret))
        .form(&[("token", token)])
        .send()
        .await
        .expect("introspection request");
    let (status, body, _) = read(response).await;
    (status, body)
}

/// Revokes `token` at acme, the client authenticated with HTTP Basic.
pub async fn revoke(auth: &TestAuth, client_id: &str, secret: &str, token: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{}/revoke", auth.issuer("acme")))
        .basic_auth(client_id, Some(secret))
        .form(&[("token", token)])
        .send()
        .await
        .expect("revocation request")
        .status()
        .as_u16()
}

/// The decoded JOSE header of a JWT.
pub fn jwt_header(token: &str) -> Value {
    jwt_part(token, 0)
}

/// The decoded (unverified) claims of a JWT.
pub fn jwt_claims(token: &str) -> Value {
    jwt_part(token, 1)
}

fn jwt_part(token: &str, index: usize) -> Value {
    let part = token.split('.').nth(index).expect("a JWT has three parts");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("base64url")).expect("JSON")
}

/// base64url of the SHA-256 of `text` (a PKCE S256 challenge).
pub fn sha256_b64(text: &str) -> String {
    common::secrets::hash_token(text)
}

/// The at_hash of an access token: base64url of the left half of its SHA-256.
pub fn at_hash(access_token: &str) -> String {
    let digest = URL_SAFE_NO_PAD.decode(sha256_b64(access_token)).unwrap();
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

pub fn location(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get("location")
        .map(|l| l.to_str().expect("ASCII Location").to_string())
}

/// The query of a URL as a map.
pub fn query_of(url: &str) -> HashMap<String, String> {
    reqwest::Url::parse(url)
        .expect("absolute URL")
        .query_pairs()
        .into_owned()
        .collect()
}

/// The authorize URL of acme with the usual parameters plus `extra` (which override).
pub fn authorize_url(auth: &TestAuth, client_id: &str, extra: &[(&str, &str)]) -> reqwest::Url {
    let mut params: Vec<(&str, &str)> = vec![
        ("client_id", client_id),
        ("response_type", "code"),
        ("redirect_uri", REDIRECT_URI),
        ("state", "st-123"),
    ];
    for (k, v) in extra {
        params.retain(|(key, _)| key != k);
        params.push((k, v));
    }
    reqwest::Url::parse_with_params(&auth.authorize_url("acme"), &params).unwrap()
}

pub async fn get_user(auth: &TestAuth, username: &str) -> User {
    directory::get_user(&auth.service.state.db, "acme", username)
        .await
        .expect("user read")
        .expect("user exists")
}

/// Replaces the user's profile as the admin service does (bumping the version).
pub async fn update_user(auth: &TestAuth, username: &str, change: impl FnOnce(&mut User)) {
    let mut user = get_user(auth, username).await;
    change(&mut user);
    user.version += 1;
    let mut tx = auth.service.state.db.begin().await.expect("transaction");
    directory::update_user(&mut tx, &user)
        .await
        .expect("user update");
    tx.commit().await.expect("commit");
}

/// Seconds since the epoch.
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64
}
