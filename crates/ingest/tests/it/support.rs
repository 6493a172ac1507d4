//! The test world: a real token service and an ingestion service on the same test database, company
//! `acme` with a client allowed every scope, its client-credentials token, a project, and helpers that
//! send batches as senders do.

use ingest::testing::{test_config, TestIngest};
use ingest::IngestConfig;
use serde_json::Value;

pub use auth::testing::{client_token, full_client_spec, TestAuth};
pub use common::testing::Backend;

pub const COMPANY: &str = "acme";
pub const OTHER: &str = "globex";

pub struct World {
    pub ingest: TestIngest,
    pub auth: TestAuth,
    pub client_id: String,
    pub secret: String,
    /// A client-credentials token of acme with every scope.
    pub token: String,
    /// acme's project.
    pub app_key: String,
    pub http: reqwest::Client,
}

impl World {
    pub async fn new(backend: Backend) -> World {
        World::with(backend, |_| {}).await
    }

    pub async fn with(backend: Backend, adjust: impl FnOnce(&mut IngestConfig)) -> World {
        let auth = TestAuth::start(backend).await;
        auth.add_company(COMPANY).await;
        let (client, secret) = auth.add_client(COMPANY, full_client_spec()).await;
        let secret = secret.expect("a confidential client");
        let mut config = test_config(&auth.url, &auth.db.url);
        adjust(&mut config);
        let ingest = TestIngest::start(config, auth.db.db.clone()).await;
        let token = client_token(&auth, COMPANY, &client.client_id, &secret, None).await;
        let mut world = World {
            ingest,
            auth,
            client_id: client.client_id,
            secret,
            token,
            app_key: String::new(),
            http: reqwest::Client::new(),
        };
        world.app_key = world.create_project("web", false).await;
        world
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.ingest.url)
    }

    /// Creates a project of acme; its app key.
    pub async fn create_project(&self, name: &str, server_time: bool) -> String {
        let response = self
            .http
            .post(self.url("/v3/projects"))
            .bearer_auth(&self.token)
            .json(&serde_json::json!({"name": name, "server_time": server_time}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{:?}", response.text().await);
        let body: Value = response.json().await.unwrap();
        body["app_key"].as_str().unwrap().to_string()
    }

    /// A token of another company, `globex`, with every scope.
    pub async fn other_company_token(&self) -> String {
        self.auth.add_company(OTHER).await;
        let (client, secret) = self.auth.add_client(OTHER, full_client_spec()).await;
        client_token(&self.auth, OTHER, &client.client_id, &secret.unwrap(), None).await
    }

    /// A token of acme's client narrowed to `scope`.
    pub async fn token_with_scope(&self, scope: &str) -> String {
        client_token(
            &self.auth,
            COMPANY,
            &self.client_id,
            &self.secret,
            Some(scope),
        )
        .await
    }

    /// Sends `events` to the v3 path as the specification shows: the URL-encoded JSON object as a form body.
    pub async fn track(&self, app_key: &str, events: Value) -> Value {
        self.track_to(&self.ingest.url, app_key, events).await
    }

    /// [`Self::track`] to another ingestion service (one started with other settings).
    pub async fn track_to(&self, service: &str, app_key: &str, events: Value) -> Value {
        let json = serde_json::json!({ "events": events }).to_string();
        let body: String = url::form_urlencoded::byte_serialize(json.as_bytes()).collect();
        self.post_track(
            format!("{service}/v3/{app_key}/track"),
            body.into_bytes(),
            &[("content-type", "application/x-www-form-urlencoded")],
        )
        .await
    }

    /// Posts `body` to `path` with `headers`; the answer must be 200 JSON.
    pub async fn track_raw(&self, path: &str, body: Vec<u8>, headers: &[(&str, &str)]) -> Value {
        self.post_track(self.url(path), body, headers).await
    }

    async fn post_track(&self, url: String, body: Vec<u8>, headers: &[(&str, &str)]) -> Value {
        let mut request = self.http.post(url).body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200, "every /track call answers 200");
        response.json().await.unwrap()
    }

    /// `method` on `path` as `token`, with an optional JSON body: the status and the JSON answer (null
    /// when there is none).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self.http.request(method, self.url(path)).bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// GET on the events of `app_key` with `query`, as `token`.
    pub async fn events(&self, app_key: &str, query: &str, token: &str) -> (u16, Value) {
        let response = self
            .http
            .get(self.url(&format!("/v3/{app_key}/events?{query}")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Every stored event of `app_key`, all pages.
    pub async fn all_events(&self, app_key: &str) -> Vec<Value> {
        let mut events = Vec::new();
        let mut query = "limit=1000".to_string();
        loop {
            let (status, page) = self.events(app_key, &query, &self.token).await;
            assert_eq!(status, 200, "{page}");
            events.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["next_cursor"].as_str() {
                Some(cursor) => query = format!("limit=1000&cursor={cursor}"),
                None => return events,
            }
        }
    }
}

/// Now in epoch milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
