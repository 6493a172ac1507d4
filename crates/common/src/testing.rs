//! Test harness shared by every service's integration tests: a fresh database per test on PostgreSQL
//! (`TEST_DATABASE_URL`, default the local server) or SQLite (a temporary file), `backend_tests!`, which
//! runs each listed test once on each backend, and `with_config_env` for tests of configuration loading.

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
