//! Test harness shared by every service's integration tests: a fresh database per test on PostgreSQL
//! (`TEST_DATABASE_URL`, default the local server) or SQLite (a temporary file), and `backend_tests!`,
//! which runs each listed test once on each backend.

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
