//! A token service for integration tests (this crate's and other services'): started on a loopback port
//! from the same code production runs, on a fresh PostgreSQL or SQLite database, with helpers that seed
//! companies, clients and users and that sign a user in through the real login page.

use std::collections::HashMap;

use actix_web::dev::ServerHandle;
use chrono::Utc;
use common::jwt::{JwtVerifier, VerifierConfig};
use common::secrets::{hash_password, SecretKey};
use common::service::Service;
use common::testing::{loopback_listener, Backend, TestDb};
use directory::{
    grants, new_client, new_company, new_role, permissions, scopes, ClientSpec, OAuthClient, User,
    DEFAULT_ACCESS_TOKEN_TTL,
};

use crate::{AuthConfig, AuthService};

pub const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";
pub const ADMIN_ROLE: &str = "Administrator";

pub struct TestAuth {
    /// Base URL, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    pub service: AuthService,
    pub db: TestDb,
    handle: ServerHandle,
}

impl Drop for TestAuth {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { handle.stop(false).await });
        }
    }
}

/// Settings for tests: one worker, a fresh secret key, caches that never hide a change.
pub fn test_config() -> AuthConfig {
    let mut config = AuthConfig {
        client_cache_ms: 0,
        ..AuthConfig::default()
    };
    config.common.secret_key = Some(SecretKey::generate().to_base64().into());
    config.common.workers = 1;
    config
}

/// A client allowed every grant, with refresh tokens, administration access and the test redirect URI.
pub fn full_client_spec() -> ClientSpec {
    ClientSpec {
        name: "test client".into(),
        grant_types: grants::ALL.iter().map(|g| g.to_string()).collect(),
        redirect_uris: vec![REDIRECT_URI.to_string()],
        scopes: scopes::ALL.iter().map(|s| s.to_string()).collect(),
        issue_refresh_token: true,
        access_token_ttl: DEFAULT_ACCESS_TOKEN_TTL,
        refresh_token_ttl: None,
        public: false,
        admin_access: true,
    }
}

/// What the redirect after a successful login carried.
#[derive(Debug, Clone)]
pub struct Redirected {
    pub code: String,
    pub state: Option<String>,
    pub session_state: Option<String>,
    pub location: String,
}

impl TestAuth {
    pub async fn start(backend: Backend) -> TestAuth {
        TestAuth::start_with(backend, |_| {}).await
    }

    pub async fn start_with(backend: Backend, adjust: impl FnOnce(&mut AuthConfig)) -> TestAuth {
        let db = TestDb::new(backend).await;
        let (listener, url) = loopback_listener();
        let mut config = test_config();
        config.common.public_auth_url = Some(url.clone());
        config.common.database_url = db.url.clone();
        adjust(&mut config);
        let service = AuthService::with_database(config, db.db.clone())
            .await
            .expect("token service starts");
        let server = service.serve(listener).expect("token service serves");
        let handle = server.handle();
        tokio::spawn(server);
        TestAuth {
            url,
            service,
            db,
            handle,
        }
    }

    pub fn issuer(&self, company: &str) -> String {
        format!("{}/oauth/{company}", self.url)
    }

    pub fn token_url(&self, company: &str) -> String {
        format!("{}/oauth/{company}/token", self.url)
    }

    pub fn authorize_url(&self, company: &str) -> String {
        format!("{}/oauth/{company}/authorize", self.url)
    }

    /// A verifier as the resource services configure it, pointed at this token service.
    pub fn verifier(&self) -> JwtVerifier {
        JwtVerifier::new(VerifierConfig::new(&self.url, &self.url))
    }

    /// Creates the company and its Administrator role (every permission).
    pub async fn add_company(&self, company: &str) {
        let db = &self.service.state.db;
        directory::ensure_company(db, &new_company(company, company))
            .await
            .expect("company");
        if directory::get_role(db, company, ADMIN_ROLE)
            .await
            .expect("role read")
            .is_none()
        {
            let role = new_role(
                company,
                ADMIN_ROLE,
                "all permissions",
                permissions::ALL,
                "test",
            );
            directory::insert_role(db, &role).await.expect("role");
        }
    }

    /// Registers a client; returns it with its secret (none for a public client).
    pub async fn add_client(
        &self,
        company: &str,
        spec: ClientSpec,
    ) -> (OAuthClient, Option<String>) {
        let (client, secret) = new_client(company, &spec, &self.service.state.secret, "test");
        directory::insert_client(&self.service.state.db, &client)
            .await
            .expect("client");
        (client, secret)
    }

    /// Creates an active user with API access and the Administrator role.
    pub async fn add_user(&self, company: &str, username: &str, password: &str) -> User {
        let mut user = User::new(company, username, ADMIN_ROLE, "test");
        user.first_name = "Test".into();
        user.last_name = username.to_string();
        user.email = Some(format!("{username}@example.com"));
        user.api_access = true;
        user.password_hash = Some(hash_password(password));
        user.password_last_set = Some(Utc::now());
        let mut tx = self.service.state.db.begin().await.expect("transaction");
        directory::insert_user(&mut tx, &user).await.expect("user");
        tx.commit().await.expect("commit");
        user
    }

    /// Signs `username` in through the login page (GET the form, POST it back) and returns what the
    /// redirect carried. `query` adds or overrides authorization parameters.
    pub async fn log_in(
        &self,
        http: &reqwest::Client,
        company: &str,
        client_id: &str,
        username: &str,
        password: &str,
        query: &[(&str, &str)],
    ) -> Result<Redirected, reqwest::Response> {
        let mut params: Vec<(&str, &str)> = vec![
            ("client_id", client_id),
            ("response_type", "code"),
            ("redirect_uri", REDIRECT_URI),
            ("state", "st-123"),
        ];
        for (k, v) in query {
            params.retain(|(key, _)| key != k);
            params.push((k, v));
        }
        let url = reqwest::Url::parse_with_params(&self.authorize_url(company), &params)
            .expect("authorize URL");
        let form = http.get(url.clone()).send().await.expect("GET authorize");
        if form.status() != 200 {
            return Err(form);
        }
        let csrf = csrf_of(&form.text().await.expect("the login page"));
        let response = http
            .post(url)
            .form(&[
                ("username", username),
                ("password", password),
                ("csrf", csrf.as_str()),
            ])
            .send()
            .await
            .expect("POST authorize");
        parse_redirect(response)
    }
}

/// The CSRF token in the hidden field of a login page.
pub fn csrf_of(html: &str) -> String {
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("the login form has a CSRF field") + marker.len();
    let end = html[start..].find('"').expect("a closing quote") + start;
    html[start..end].to_string()
}

/// Posts the login form at `url` as a browser does: GET the form with `http` (which keeps the pre-login
/// cookie), then POST the credentials with the form's CSRF token.
pub async fn post_login(
    http: &reqwest::Client,
    url: reqwest::Url,
    username: &str,
    password: &str,
) -> reqwest::Response {
    let form = http.get(url.clone()).send().await.expect("GET authorize");
    let csrf = csrf_of(&form.text().await.expect("the login page"));
    http.post(url)
        .form(&[
            ("username", username),
            ("password", password),
            ("csrf", csrf.as_str()),
        ])
        .send()
        .await
        .expect("POST authorize")
}

/// A reqwest client that does not follow redirects and keeps cookies, as a browser session.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_store(true)
        .build()
        .expect("client")
}

/// Reads `code`, `state` and `session_state` from a redirect; the response itself when it is not one.
#[allow(clippy::result_large_err)] // the response is handed back whole for the test to inspect
pub fn parse_redirect(response: reqwest::Response) -> Result<Redirected, reqwest::Response> {
    let Some(location) = response
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .map(str::to_string)
    else {
        return Err(response);
    };
    let url = reqwest::Url::parse(&location).expect("absolute Location");
    let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
    let Some(code) = query.get("code").cloned() else {
        return Err(response);
    };
    Ok(Redirected {
        code,
        state: query.get("state").cloned(),
        session_state: query.get("session_state").cloned(),
        location,
    })
}

/// A client-credentials access token of `client_id` in `company`, optionally narrowed to `scope`.
pub async fn client_token(
    auth: &TestAuth,
    company: &str,
    client_id: &str,
    secret: &str,
    scope: Option<&str>,
) -> String {
    let mut form = vec![("grant_type", "client_credentials")];
    if let Some(scope) = scope {
        form.push(("scope", scope));
    }
    let response = reqwest::Client::new()
        .post(auth.token_url(company))
        .basic_auth(client_id, Some(secret))
        .form(&form)
        .send()
        .await
        .expect("the token endpoint answers");
    assert_eq!(response.status(), 200, "client-credentials grant");
    let body: serde_json::Value = response.json().await.expect("a JSON token response");
    body["access_token"]
        .as_str()
        .expect("an access token")
        .to_string()
}
