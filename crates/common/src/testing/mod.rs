//! Test harness shared by every service's integration tests: a fresh database per test on PostgreSQL
//! (`TEST_DATABASE_URL`, default the local server) or SQLite (a temporary file), `backend_tests!`, which
//! runs each listed test once on each backend, a namespace of its own per test on the RabbitMQ broker
//! (`TestBroker`), a Meilisearch server (`meili`) and an S3 server (`s3`) of the test's own, a TCP proxy
//! that plays outages (`proxy`), and `with_config_env` for tests of configuration loading.

pub mod meili;
pub mod proxy;
pub mod s3;

use crate::bus::{RabbitBus, RabbitOptions, RetryPolicy, Topology};
use crate::db::Database;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// A database that exists for one test and is dropped after it.
pub struct TestDb {
    pub url: String,
    pub db: Database,
    cleanup: Option<Cleanup>,
}

enum Cleanup {
    Postgres { admin_url: String, name: String },
    Sqlite { path: std::path::PathBuf },
}

fn postgres_admin_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

impl TestDb {
    pub async fn new(backend: Backend) -> TestDb {
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        match backend {
            Backend::Postgres => {
                let admin_url = postgres_admin_url();
                let admin = sqlx::PgPool::connect(&admin_url)
                    .await
                    .expect("PostgreSQL for tests (TEST_DATABASE_URL)");
                let name = format!("speech_test_{suffix}");
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&admin)
                    .await
                    .expect("create test database");
                admin.close().await;
                let mut url = url::Url::parse(&admin_url).expect("TEST_DATABASE_URL is a URL");
                url.set_path(&name);
                let url = url.to_string();
                let db = Database::connect(&url, 10)
                    .await
                    .expect("connect to the test database");
                TestDb {
                    url,
                    db,
                    cleanup: Some(Cleanup::Postgres { admin_url, name }),
                }
            }
            Backend::Sqlite => {
                let path = std::env::temp_dir().join(format!("speech-test-{suffix}.db"));
                let url = format!("sqlite://{}", path.display());
                let db = Database::connect(&url, 5)
                    .await
                    .expect("open the test database");
                TestDb {
                    url,
                    db,
                    cleanup: Some(Cleanup::Sqlite { path }),
                }
            }
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let db = self.db.clone();
        match self.cleanup.take() {
            Some(Cleanup::Postgres { admin_url, name }) => {
                // Drop runs outside async context: a short-lived runtime on its own thread does the work.
                let _ = std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("runtime");
                    rt.block_on(async move {
                        db.close().await;
                        if let Ok(admin) = sqlx::PgPool::connect(&admin_url).await {
                            let _ = sqlx::query(&format!(
                                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                            ))
                            .execute(&admin)
                            .await;
                            admin.close().await;
                        }
                    });
                })
                .join();
            }
            Some(Cleanup::Sqlite { path }) => {
                for ext in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
                }
            }
            None => {}
        }
    }
}

/// The RabbitMQ broker of the tests: `TEST_AMQP_URL`, default the local server's guest account.
pub fn amqp_url() -> String {
    std::env::var("TEST_AMQP_URL")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// One test's exchange and queues on the test broker: their names start with a prefix of their own, so
/// tests run in parallel on one broker, and they are deleted (with any message left in them) when this is
/// dropped, also when the test failed.
pub struct TestBroker {
    pub url: String,
    pub topology: Topology,
    topics: Vec<String>,
    /// The policies of the adapters started here: each names wait queues of its own.
    policies: parking_lot::Mutex<Vec<RetryPolicy>>,
}

impl TestBroker {
    /// A namespace whose queues of `topics` are deleted at the end.
    pub fn new(topics: &[&str]) -> TestBroker {
        let id = uuid::Uuid::new_v4().simple().to_string();
        TestBroker {
            url: amqp_url(),
            topology: Topology::new(format!("test-{}.", &id[..12])),
            topics: topics.iter().map(|t| t.to_string()).collect(),
            policies: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// Adapter options for this namespace, polling often so tests wait little, and giving up on a
    /// broker that does not answer after 5 s rather than 10: a fault test that cuts a connection while a
    /// confirm is on its way waits that long before the relay connects again.
    pub fn options(&self) -> RabbitOptions {
        RabbitOptions {
            prefix: self.topology.prefix().to_string(),
            poll: std::time::Duration::from_millis(20),
            timeout: std::time::Duration::from_secs(5),
            ..RabbitOptions::default()
        }
    }

    /// Notes that an adapter with `policy` runs here, so its wait queues are deleted too.
    pub fn uses(&self, policy: RetryPolicy) {
        self.policies.lock().push(policy);
    }

    /// An adapter on this namespace and `db`, connected to the broker.
    pub async fn connect(&self, db: &Database, policy: RetryPolicy) -> RabbitBus {
        self.connect_with(db, policy, self.options()).await
    }

    /// An adapter on this namespace and `db` with `options` (which keep this namespace's prefix).
    pub async fn connect_with(
        &self,
        db: &Database,
        policy: RetryPolicy,
        options: RabbitOptions,
    ) -> RabbitBus {
        self.uses(policy);
        RabbitBus::connect(&self.url, db.clone(), policy, options)
            .await
            .expect("RabbitMQ for tests (TEST_AMQP_URL)")
    }
}

impl Drop for TestBroker {
    fn drop(&mut self) {
        let mut policies = std::mem::take(&mut *self.policies.lock());
        if policies.is_empty() {
            policies.push(RetryPolicy::default());
        }
        let (url, topology) = (self.url.clone(), self.topology.clone());
        let topics = std::mem::take(&mut self.topics);
        // As for `TestDb`: Drop is not async, so a runtime on a thread of its own does the work.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
                for policy in &policies {
                    if let Err(e) = topology.delete(&url, &topics, policy).await {
                        eprintln!(
                            "could not delete the test queues {}*: {e}",
                            topology.prefix()
                        );
                    }
                }
            });
        })
        .join();
    }
}

/// A listener on a free loopback port, and the base URL that reaches it.
pub fn loopback_listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("local address"));
    (listener, url)
}

/// Runs `f` with exactly `vars` set among the names configuration reads (every `SPEECH_*` variable and
/// the shared unprefixed ones such as `DATABASE_URL`), then restores the environment. The environment
/// belongs to the whole process, so configuration tests take turns here; under nextest each test has its
/// own process anyway.
pub fn with_config_env<R>(vars: &[(&str, &str)], f: impl FnOnce() -> R) -> R {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let _restore = RestoreEnv(
        std::env::vars_os()
            .filter(|(key, _)| key.to_str().is_some_and(is_config_name))
            .collect(),
    );
    clear_config_env();
    for (key, value) in vars {
        std::env::set_var(key, value);
    }
    f()
}

fn is_config_name(key: &str) -> bool {
    key.starts_with("SPEECH_")
        || crate::config::SHARED_ENV
            .iter()
            .any(|(name, _)| key.eq_ignore_ascii_case(name))
}

fn clear_config_env() {
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(is_config_name) {
            std::env::remove_var(key);
        }
    }
}

/// Puts the saved configuration variables back, also when the test panicked.
struct RestoreEnv(Vec<(std::ffi::OsString, std::ffi::OsString)>);

impl Drop for RestoreEnv {
    fn drop(&mut self) {
        clear_config_env();
        for (key, value) in &self.0 {
            std::env::set_var(key, value);
        }
    }
}

/// Runs each named `async fn(Backend)` once on PostgreSQL and once on SQLite, as tests
/// `on_postgres::<name>` and `on_sqlite::<name>`.
#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),* $(,)?) => {
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::testing::Backend::Postgres).await
                }
            )*
        }
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::testing::Backend::Sqlite).await
                }
            )*
        }
    };
}
