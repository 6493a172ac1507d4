//! The test world: a real token service and an administration service on the same test database (they
//! share the directory), company `acme` with a confidential client and the administrator `root`, whose
//! token comes from the real authorization-code flow.

use admin::testing::TestAdmin;
use admin::AdminConfig;
use serde_json::{json, Value};

pub use auth::testing::{browser, full_client_spec, TestAuth, REDIRECT_URI};
pub use common::testing::Backend;
use directory::User;

pub const COMPANY: &str = "acme";
pub const ROOT: &str = "root";
pub const PASSWORD: &str = "correct horse battery staple";

pub struct World {
    pub auth: TestAuth,
    pub admin: TestAdmin,
    pub client_id: String,
    pub secret: String,
    /// root's access token.
    pub token: String,
}

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
    /// The body as sent, for what `body` does not keep (the order of keys).
    pub text: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }

    pub fn etag(&self) -> String {
        self.header("etag").expect("an ETag header")
    }

    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    pub fn field(&self) -> &str {
        self.body["field"].as_str().unwrap_or("")
    }
}

impl World {
    pub async fn new(backend: Backend) -> World {
        World::with(backend, |_| {}).await
    }

    pub async fn with(backend: Backend, adjust: impl FnOnce(&mut AdminConfig)) -> World {
        let auth = TestAuth::start(backend).await;
        auth.add_company(COMPANY).await;
        let (client, secret) = auth.add_client(COMPANY, full_client_spec()).await;
        let secret = secret.expect("a confidential client");
        auth.add_user(COMPANY, ROOT, PASSWORD).await;
        let admin = start_admin(&auth, adjust).await;
        let token = user_token(&auth, COMPANY, &client.client_id, &secret, ROOT, PASSWORD).await;
        World {
            auth,
            admin,
            client_id: client.client_id,
            secret,
            token,
        }
    }

    /// Another company with its own client and administrator; returns that administrator's token.
    pub async fn other_company(&self, company: &str) -> String {
        self.auth.add_company(company).await;
        let (client, secret) = self.auth.add_client(company, full_client_spec()).await;
        self.auth.add_user(company, ROOT, PASSWORD).await;
        user_token(
            &self.auth,
            company,
            &client.client_id,
            &secret.unwrap(),
            ROOT,
            PASSWORD,
        )
        .await
    }

    /// A token of `username` at acme through the code flow.
    pub async fn token_of(&self, username: &str, password: &str) -> String {
        user_token(
            &self.auth,
            COMPANY,
            &self.client_id,
            &self.secret,
            username,
            password,
        )
        .await
    }

    /// Revokes `token` at the token service (RFC 7009), as its client would.
    pub async fn revoke(&self, token: &str) {
        let response = reqwest::Client::new()
            .post(format!("{}/oauth/{COMPANY}/revoke", self.auth.url))
            .basic_auth(&self.client_id, Some(&self.secret))
            .form(&[("token", token)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "the token service revokes it");
    }

    pub async fn get(&self, path: &str) -> Answer {
        call(&self.admin, "GET", path, Some(&self.token), None, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Answer {
        call(
            &self.admin,
            "POST",
            path,
            Some(&self.token),
            Some(body),
            None,
        )
        .await
    }

    pub async fn put(&self, path: &str, body: Value, if_match: &str) -> Answer {
        call(
            &self.admin,
            "PUT",
            path,
            Some(&self.token),
            Some(body),
            Some(if_match),
        )
        .await
    }

    pub async fn delete(&self, path: &str, if_match: &str) -> Answer {
        call(
            &self.admin,
            "DELETE",
            path,
            Some(&self.token),
            None,
            Some(if_match),
        )
        .await
    }

    /// Creates a user through the API (201 expected) and returns the record.
    pub async fn create_user(&self, body: Value) -> Value {
        let a = self.post("/users", body).await;
        assert_eq!(a.status, 201, "{:?}", a.body);
        a.body
    }
}

pub async fn start_admin(auth: &TestAuth, adjust: impl FnOnce(&mut AdminConfig)) -> TestAdmin {
    TestAdmin::start(
        &auth.db.db,
        &auth.db.url,
        &auth.url,
        &auth.service.state.secret,
        adjust,
    )
    .await
}

/// Sends one request to the administration service; `path` starts after `/admin/v1`.
pub async fn call(
    admin: &TestAdmin,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
    if_match: Option<&str>,
) -> Answer {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = reqwest::Client::new().request(method, admin.api(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    if let Some(tag) = if_match {
        request = request.header("If-Match", tag);
    }
    read(request.send().await.expect("admin request")).await
}

pub async fn read(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()))
    };
    Answer {
        status,
        body,
        headers,
        text,
    }
}

/// Signs `username` in through the login page and exchanges the code; returns the token response.
pub async fn code_flow(
    auth: &TestAuth,
    company: &str,
    client_id: &str,
    secret: &str,
    username: &str,
    password: &str,
    query: &[(&str, &str)],
) -> Result<Value, u16> {
    let redirected = match auth
        .log_in(&browser(), company, client_id, username, password, query)
        .await
    {
        Ok(r) => r,
        Err(response) => return Err(response.status().as_u16()),
    };
    let response = reqwest::Client::new()
        .post(auth.token_url(company))
        .form(&[
            ("grant_type", "authorization_code"),
            ("client_id", client_id),
            ("client_secret", secret),
            ("code", redirected.code.as_str()),
            ("redirectURI", REDIRECT_URI),
        ])
        .send()
        .await
        .expect("code exchange");
    let answer = read(response).await;
    assert_eq!(answer.status, 200, "code exchange: {:?}", answer.body);
    Ok(answer.body)
}

pub async fn user_token(
    auth: &TestAuth,
    company: &str,
    client_id: &str,
    secret: &str,
    username: &str,
    password: &str,
) -> String {
    let body = code_flow(auth, company, client_id, secret, username, password, &[])
        .await
        .unwrap_or_else(|status| panic!("{username} could not log in: {status}"));
    body["access_token"].as_str().unwrap().to_string()
}

/// A client-credentials token of the client.
pub async fn client_token(auth: &TestAuth, company: &str, client_id: &str, secret: &str) -> Answer {
    let response = reqwest::Client::new()
        .post(auth.token_url(company))
        .basic_auth(client_id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .expect("token request");
    read(response).await
}

/// A minimal valid user body.
pub fn user_body(username: &str) -> Value {
    json!({
        "username": username,
        "first_name": "First",
        "last_name": username,
        "email": format!("{username}@example.com"),
        "roles": {"primary_role": {"role": "Administrator"}, "extra_roles": []},
    })
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

/// Inserts a user straight into the directory, as another replica or service would.
pub async fn insert_user(db: &common::db::Database, user: &User) {
    let mut tx = db.begin().await.expect("transaction");
    directory::insert_user(&mut tx, user)
        .await
        .expect("user insert");
    tx.commit().await.expect("commit");
}

/// Replaces a user straight in the directory (the caller bumps the version).
pub async fn update_user(db: &common::db::Database, user: &User) {
    let mut tx = db.begin().await.expect("transaction");
    directory::update_user(&mut tx, user)
        .await
        .expect("user update");
    tx.commit().await.expect("commit");
}

/// Deletes a user straight from the directory; false when it did not exist.
pub async fn delete_user(db: &common::db::Database, company: &str, username: &str) -> bool {
    match directory::get_user(db, company, username).await.unwrap() {
        Some(u) => directory::delete_user_if_version(db, company, username, u.version)
            .await
            .unwrap(),
        None => false,
    }
}
