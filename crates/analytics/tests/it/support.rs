//! The test world: a real token service and an analytics service on the same test database, company
//! `acme` with a client allowed every analytics scope, its client-credentials token, and helpers that
//! call the API as a user would (the token as a query parameter, uploads as multipart forms).

use std::time::{Duration, Instant};

use analytics::testing::TestAnalytics;
use analytics::AnalyticsConfig;
use serde_json::{json, Value};

pub use auth::testing::{full_client_spec, TestAuth};
pub use common::testing::Backend;

pub const COMPANY: &str = "acme";
pub const ORG: &str = "support";
pub const FOLDER: &str = "inbox";

pub struct World {
    pub auth: TestAuth,
    pub analytics: TestAnalytics,
    pub client_id: String,
    pub secret: String,
    /// A client-credentials token of acme with analytics:read and analytics:write.
    pub token: String,
    /// The production adapters' test servers (RabbitMQ namespace, Meilisearch), when the world runs on
    /// them; dropped last, after the service.
    pub _production: Option<(
        common::testing::TestBroker,
        common::testing::meili::MeiliServer,
    )>,
}

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub content_type: String,
}

impl World {
    pub async fn new(backend: Backend) -> World {
        World::with(backend, |_| {}).await
    }

    pub async fn with(backend: Backend, adjust: impl FnOnce(&mut AnalyticsConfig)) -> World {
        let auth = TestAuth::start(backend).await;
        auth.add_company(COMPANY).await;
        let (client, secret) = auth.add_client(COMPANY, full_client_spec()).await;
        let secret = secret.expect("a confidential client");
        let analytics = TestAnalytics::start(&auth.db.db, &auth.db.url, &auth.url, adjust).await;
        let token = client_token(&auth, COMPANY, &client.client_id, &secret, None).await;
        World {
            _production: None,
            auth,
            analytics,
            client_id: client.client_id,
            secret,
            token,
        }
    }

    /// The world on the production adapters: PostgreSQL, RabbitMQ (a namespace of the test broker) and
    /// a Meilisearch server of the test's own; `None` (with a line on stderr) when no Meilisearch binary
    /// is found. Objects stay on local disk until the S3 adapter exists.
    pub async fn production() -> Option<World> {
        use common::bus::RetryPolicy;
        use common::testing::meili::{MeiliServer, MASTER_KEY};
        let meili = MeiliServer::start().await?;
        let auth = TestAuth::start(Backend::Postgres).await;
        auth.add_company(COMPANY).await;
        let (client, secret) = auth.add_client(COMPANY, full_client_spec()).await;
        let secret = secret.expect("a confidential client");
        let broker = common::testing::TestBroker::new(&[
            messages::topics::REINDEX,
            messages::topics::DELETE,
        ]);
        let policy = RetryPolicy {
            first_wait: Duration::from_millis(200),
            ..RetryPolicy::default()
        };
        let bus = broker.connect(&auth.db.db, policy).await;
        let data_dir = analytics::testing::temp_data_dir();
        let ports = analytics::Ports {
            bus: std::sync::Arc::new(bus),
            objects: std::sync::Arc::new(
                common::objects::LocalDirectory::open(data_dir.join("objects")).unwrap(),
            ),
            search: std::sync::Arc::new(
                common::search::MeiliIndex::connect(&meili.url, Some(MASTER_KEY), "calls")
                    .await
                    .expect("Meilisearch index"),
            ),
        };
        let analytics =
            TestAnalytics::start_on(&auth.db.db, &auth.db.url, &auth.url, data_dir, ports).await;
        let token = client_token(&auth, COMPANY, &client.client_id, &secret, None).await;
        Some(World {
            _production: Some((broker, meili)),
            auth,
            analytics,
            client_id: client.client_id,
            secret,
            token,
        })
    }

    /// The world with company acme, organization `support` (Europe/Berlin) and folder `inbox`, which
    /// configures the metadata fields `queue` and `region`.
    pub async fn with_folder(backend: Backend) -> World {
        let world = World::new(backend).await;
        world
            .create_folder(ORG, FOLDER, json!({"custom_meta": ["queue", "region"]}))
            .await;
        world
    }

    pub async fn create_folder(&self, org: &str, folder: &str, settings: Value) {
        for (path, body) in [
            (format!("/config/{COMPANY}"), json!({})),
            (
                format!("/config/{COMPANY}/{org}"),
                json!({"timezone": "Europe/Berlin"}),
            ),
            (format!("/config/{COMPANY}/{org}/{folder}"), settings),
        ] {
            let a = self.send("PUT", &path, Some(body)).await;
            assert_eq!(a.status, 200, "{path}: {}", a.text);
        }
    }

    /// Another company with its own client; returns its client-credentials token.
    pub async fn other_company(&self, company: &str) -> String {
        self.auth.add_company(company).await;
        let (client, secret) = self.auth.add_client(company, full_client_spec()).await;
        client_token(
            &self.auth,
            company,
            &client.client_id,
            &secret.unwrap(),
            None,
        )
        .await
    }

    /// A token of acme's client with only `scope`.
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

    pub fn url(&self, path: &str, token: Option<&str>) -> String {
        let mut url = format!("{}{path}", self.analytics.url);
        if let Some(token) = token {
            url.push(if path.contains('?') { '&' } else { '?' });
            url.push_str("token=");
            url.push_str(token);
        }
        url
    }

    /// A request with acme's token as the `token` query parameter.
    pub async fn send(&self, method: &str, path: &str, body: Option<Value>) -> Answer {
        self.send_as(Some(&self.token), method, path, body).await
    }

    pub async fn send_as(
        &self,
        token: Option<&str>,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = reqwest::Client::new().request(method, self.url(path, token));
        if let Some(body) = body {
            request = request.json(&body);
        }
        read(request.send().await.expect("analytics request")).await
    }

    /// Uploads `transcript` into `org/folder` as a multipart form with the token as a form field.
    pub async fn upload_to(
        &self,
        org: &str,
        folder: &str,
        transcript: &Value,
        metadata: Option<Value>,
    ) -> Answer {
        self.upload_as(
            &self.token,
            org,
            folder,
            transcript.to_string().into_bytes(),
            "call.json",
            metadata,
        )
        .await
    }

    pub async fn upload_as(
        &self,
        token: &str,
        org: &str,
        folder: &str,
        file: Vec<u8>,
        file_name: &str,
        metadata: Option<Value>,
    ) -> Answer {
        let mut form = reqwest::multipart::Form::new()
            .text("token", token.to_string())
            .part(
                "file",
                reqwest::multipart::Part::bytes(file).file_name(file_name.to_string()),
            );
        if let Some(metadata) = metadata {
            form = form.text("metadata", metadata.to_string());
        }
        let response = reqwest::Client::new()
            .post(self.url(&format!("/transcribe/{COMPANY}/{org}/{folder}"), None))
            .multipart(form)
            .send()
            .await
            .expect("upload");
        read(response).await
    }

    /// Uploads into the default folder and returns the new call's id.
    pub async fn add_call(&self, transcript: &Value) -> String {
        let a = self.upload_to(ORG, FOLDER, transcript, None).await;
        assert_eq!(a.status, 200, "{}", a.text);
        a.body["tId"].as_str().expect("tId").to_string()
    }

    /// The stored transcript JSON of a call in the default folder.
    pub async fn stored_transcript(&self, call: &str) -> Option<Value> {
        let key = format!("{COMPANY}/{ORG}/{FOLDER}/{call}/transcript.json");
        let bytes = self
            .analytics
            .service
            .state
            .objects
            .get(&key)
            .await
            .unwrap()?;
        Some(serde_json::from_slice(&bytes).unwrap())
    }

    /// Searches the default organization until `ready` holds for the answer (the index follows the bus).
    pub async fn search_until(&self, query: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let path = format!("/search/{COMPANY}/{ORG}?{query}");
        eventually(|| async {
            let a = self.send("GET", &path, None).await;
            assert_eq!(a.status, 200, "{}", a.text);
            ready(&a.body).then_some(a.body)
        })
        .await
    }
}

/// Polls `probe` until it gives a value (at most 20 s).
pub async fn eventually<T, F, Fut>(probe: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "the condition did not hold within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client-credentials token from the real token endpoint.
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
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["access_token"].as_str().unwrap().to_string()
}

pub async fn read(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        body,
        text,
        content_type,
    }
}

/// A transcript of a short call: the agent greets, the client asks about `topic`.
pub fn transcript(topic: &str) -> Value {
    json!({
        "filename": "call-0001.wav",
        "datetime": "2026-11-20T10:15:00",
        "agent_id": "agent-7",
        "audio_seconds": 312.5,
        "metadata": {"queue": "billing", "campaign": "autumn"},
        "utterances": [
            {"speaker": "agent", "channel": 0, "start": 0.52, "end": 3.2, "confidence": 0.91,
             "text": "thank you for calling",
             "words": [{"word": "thank", "start": 0.52, "end": 0.7, "confidence": 0.93}]},
            {"speaker": "client", "channel": 1, "start": 3.5, "end": 6.0,
             "text": format!("I have a question about my {topic}")}
        ]
    })
}
