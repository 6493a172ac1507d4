//! The test world: a real token service and an analytics service on the same test database, company
//! `acme` with a client allowed every analytics scope, its client-credentials token, and helpers that
//! call the API as a user would (the token as a query parameter, uploads as multipart forms).

use std::sync::Arc;
use std::time::{Duration, Instant};

use analytics::testing::TestAnalytics;
use analytics::AnalyticsConfig;
use common::bus::{RabbitBus, RabbitOptions, RetryPolicy};
use common::search::MeiliIndex;
use common::testing::meili::{MeiliServer, MASTER_KEY};
use common::testing::proxy::TcpProxy;
use common::testing::s3::S3Server;
use common::testing::TestBroker;
use serde_json::{json, Value};

pub use auth::testing::{client_token, full_client_spec, TestAuth};
pub use common::testing::Backend;

pub const COMPANY: &str = "acme";
pub const ORG: &str = "support";
pub const FOLDER: &str = "inbox";

/// The adapters a world runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    /// The embedded adapters (the bus in the database, objects under a directory, the tantivy index) on
    /// PostgreSQL or SQLite.
    Embedded(Backend),
    /// The production adapters: PostgreSQL, RabbitMQ (a namespace of the test broker, reached through a
    /// proxy the test can take down), an S3 server and a Meilisearch server of the test's own.
    Production,
}

impl Stack {
    pub fn backend(self) -> Backend {
        match self {
            Stack::Embedded(backend) => backend,
            Stack::Production => Backend::Postgres,
        }
    }
}

/// Runs each listed test on the embedded adapters on PostgreSQL and on SQLite, and on the production
/// adapters (`on_production`, which needs a Meilisearch server: `.config/nextest.toml`).
#[macro_export]
macro_rules! stack_tests {
    ($($name:ident),* $(,)?) => {
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::Stack::Embedded($crate::support::Backend::Postgres)).await
                }
            )*
        }
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::Stack::Embedded($crate::support::Backend::Sqlite)).await
                }
            )*
        }
        mod on_production {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::Stack::Production).await
                }
            )*
        }
    };
}

/// The test servers of the production adapters, dropped after the service.
pub struct ProductionServers {
    pub broker: TestBroker,
    /// Between the service and the broker: `broker_proxy.set_up(false)` plays a broker restart.
    pub broker_proxy: TcpProxy,
    pub broker_url: String,
    pub s3: S3Server,
    pub meili: MeiliServer,
}

/// Retries come back quickly in tests.
pub fn test_policy() -> RetryPolicy {
    RetryPolicy {
        first_wait: Duration::from_millis(200),
        ..RetryPolicy::default()
    }
}

impl ProductionServers {
    pub async fn start() -> ProductionServers {
        let meili = MeiliServer::start().await;
        let broker = TestBroker::new(messages::topics::ANALYTICS_WORKERS);
        let (broker_proxy, broker_url) = TcpProxy::to_broker(true).await;
        ProductionServers {
            broker,
            broker_proxy,
            broker_url,
            s3: S3Server::start(),
            meili,
        }
    }

    /// A RabbitMQ adapter on this world's namespace (through the proxy), with the service's windows.
    pub async fn rabbit(&self, db: &common::db::Database) -> RabbitBus {
        self.broker.uses(test_policy());
        RabbitBus::connect(
            &self.broker_url,
            db.clone(),
            test_policy(),
            RabbitOptions {
                windows: analytics::AnalyticsService::windows(),
                ..self.broker.options()
            },
        )
        .await
        .expect("RabbitMQ for tests (TEST_AMQP_URL)")
    }

    pub async fn ports(&self, db: &common::db::Database) -> analytics::Ports {
        analytics::Ports {
            bus: Arc::new(self.rabbit(db).await),
            objects: Arc::new(self.s3.store().await.expect("the test S3 server")),
            search: Arc::new(
                MeiliIndex::connect(&self.meili.url, Some(MASTER_KEY), "calls")
                    .await
                    .expect("Meilisearch index"),
            ),
        }
    }
}

pub struct World {
    pub auth: TestAuth,
    pub analytics: TestAnalytics,
    pub client_id: String,
    pub secret: String,
    /// A client-credentials token of acme with analytics:read and analytics:write.
    pub token: String,
    /// The production adapters' test servers, when the world runs on them; dropped last, after the
    /// service.
    pub production: Option<ProductionServers>,
}

/// Another worker's bus: on the embedded stack the same database queue, whose lease runs out when its
/// holder dies; on the production stack a connection of its own to RabbitMQ, which the broker gives back
/// when it closes.
pub enum StandIn {
    Shared(Arc<dyn common::bus::Bus>),
    Rabbit(RabbitBus),
}

impl StandIn {
    pub fn bus(&self) -> &dyn common::bus::Bus {
        match self {
            StandIn::Shared(bus) => bus.as_ref(),
            StandIn::Rabbit(bus) => bus,
        }
    }

    /// The worker dies holding `delivery`: never acknowledged.
    pub async fn kill(self, delivery: common::bus::Delivery) {
        drop(delivery);
        if let StandIn::Rabbit(bus) = self {
            bus.close().await;
        }
    }
}

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub content_type: String,
    /// The `Request-Id` header (answers about a transcription request).
    pub request_id: Option<String>,
}

impl World {
    pub async fn new(stack: Stack) -> World {
        World::with(stack, |_| {}).await
    }

    pub async fn with(stack: Stack, adjust: impl FnOnce(&mut AnalyticsConfig)) -> World {
        let auth = TestAuth::start(stack.backend()).await;
        auth.add_company(COMPANY).await;
        let (client, secret) = auth.add_client(COMPANY, full_client_spec()).await;
        let secret = secret.expect("a confidential client");
        let (analytics, production) = match stack {
            Stack::Embedded(_) => (
                TestAnalytics::start(&auth.db.db, &auth.db.url, &auth.url, adjust).await,
                None,
            ),
            Stack::Production => {
                let servers = ProductionServers::start().await;
                let ports = servers.ports(&auth.db.db).await;
                let analytics =
                    TestAnalytics::start_on(&auth.db.db, &auth.db.url, &auth.url, adjust, ports)
                        .await;
                (analytics, Some(servers))
            }
        };
        let token = client_token(&auth, COMPANY, &client.client_id, &secret, None).await;
        World {
            production,
            auth,
            analytics,
            client_id: client.client_id,
            secret,
            token,
        }
    }

    /// A bus of another worker process, which takes a job and may die holding it (`StandIn::kill`).
    pub async fn stand_in(&self) -> StandIn {
        match &self.production {
            None => StandIn::Shared(self.analytics.service.state.bus.clone()),
            Some(servers) => StandIn::Rabbit(servers.rabbit(&self.auth.db.db).await),
        }
    }

    /// The production servers of a world on `Stack::Production`.
    pub fn servers(&self) -> &ProductionServers {
        self.production
            .as_ref()
            .expect("a world on the production stack")
    }

    /// The world with company acme, organization `support` (Europe/Berlin) and folder `inbox`, which
    /// configures the metadata fields `queue` and `region`.
    pub async fn with_folder(stack: Stack) -> World {
        let world = World::new(stack).await;
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

    /// The server key the service derives companies' callback secrets from.
    pub fn server_key(&self) -> common::secrets::SecretKey {
        self.analytics.service.state.config.common.secret().unwrap()
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

    /// Uploads `transcript` into `company`'s `org/folder` with `token`, as a multipart form.
    pub async fn upload_into(
        &self,
        token: &str,
        company: &str,
        org: &str,
        folder: &str,
        transcript: &Value,
    ) -> Answer {
        let form = reqwest::multipart::Form::new()
            .text("token", token.to_string())
            .part(
                "file",
                reqwest::multipart::Part::bytes(transcript.to_string().into_bytes())
                    .file_name("call.json"),
            );
        let response = reqwest::Client::new()
            .post(self.url(&format!("/transcribe/{company}/{org}/{folder}"), None))
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
        assert_eq!(a.request_id.as_deref(), a.body["requestid"].as_str());
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

    /// The stored transcript of a call in the default folder once the metadata worker has written every
    /// change committed so far (a metadata request leaves its change pending on the call's row).
    pub async fn written_transcript(&self, call: &str) -> Value {
        let db = &self.analytics.service.state.db;
        eventually(|| async {
            let pending = analytics_store::get_call_metadata(db, call)
                .await
                .unwrap()
                .expect("the call exists")
                .pending;
            pending.is_none().then_some(())
        })
        .await;
        self.stored_transcript(call).await.expect("stored")
    }

    /// Searches the default organization until `ready` holds for the answer (the index follows the bus).
    pub async fn search_until(&self, query: &str, ready: impl Fn(&Value) -> bool) -> Value {
        self.search_within(EVENTUALLY, query, ready).await
    }

    /// `search_until` with a deadline of its own; a search that never gets there reports its last answer.
    pub async fn search_within(
        &self,
        limit: Duration,
        query: &str,
        ready: impl Fn(&Value) -> bool,
    ) -> Value {
        let path = format!("/search/{COMPANY}/{ORG}?{query}");
        let last = parking_lot::Mutex::new(Value::Null);
        let found = within(limit, || async {
            let a = self.send("GET", &path, None).await;
            assert_eq!(a.status, 200, "{}", a.text);
            if ready(&a.body) {
                return Some(a.body);
            }
            *last.lock() = a.body;
            None
        })
        .await;
        found.unwrap_or_else(|| {
            panic!(
                "{path} did not get there within {limit:?}; last answer: {}",
                last.lock()
            )
        })
    }
}

/// How long `eventually` waits.
pub const EVENTUALLY: Duration = Duration::from_secs(20);

/// Polls `probe` until it gives a value (at most 20 s).
pub async fn eventually<T, F, Fut>(probe: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    within(EVENTUALLY, probe)
        .await
        .unwrap_or_else(|| panic!("the condition did not hold within {EVENTUALLY:?}"))
}

/// Polls `probe` until it gives a value, or `None` once `limit` has passed.
pub async fn within<T, F, Fut>(limit: Duration, probe: F) -> Option<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe().await {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn read(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header("content-type").unwrap_or_default();
    let request_id = header("request-id");
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        body,
        text,
        content_type,
        request_id,
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
