//! An administration service for integration tests (this crate's and other services'): started on a
//! loopback port from the same code production runs, on a database the test already has (usually the one
//! of a test token service, so that both share the directory).

use actix_web::dev::ServerHandle;
use common::db::Database;
use common::secrets::SecretKey;
use common::service::Service;
use common::testing::loopback_listener;

use crate::{AdminConfig, AdminService};

pub struct TestAdmin {
    /// Base URL, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    pub service: AdminService,
    handle: ServerHandle,
}

impl Drop for TestAdmin {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { handle.stop(false).await });
        }
    }
}

/// Settings for tests: one worker, generous limits (tests that exercise limits lower them).
pub fn test_config(auth_url: &str, secret: &SecretKey, database_url: &str) -> AdminConfig {
    let mut config = AdminConfig {
        auth_url: auth_url.to_string(),
        rate_limit_per_second: 1000,
        rate_limit_per_day: 100_000,
        read_cache_ms: 0,
        ..AdminConfig::default()
    };
    config.common.secret_key = Some(secret.to_base64().into());
    config.common.public_auth_url = Some(auth_url.to_string());
    config.common.database_url = database_url.to_string();
    config.common.workers = 1;
    config
}

impl TestAdmin {
    /// Starts on `db` (at `database_url`), verifying tokens of the token service at `auth_url`, whose
    /// secret key is `secret`. `adjust` changes the configuration before the start.
    pub async fn start(
        db: &Database,
        database_url: &str,
        auth_url: &str,
        secret: &SecretKey,
        adjust: impl FnOnce(&mut AdminConfig),
    ) -> TestAdmin {
        let (listener, url) = loopback_listener();
        let mut config = test_config(auth_url, secret, database_url);
        adjust(&mut config);
        let service = AdminService::with_database(config, db.clone())
            .await
            .expect("admin service starts");
        let server = service.serve(listener).expect("admin service serves");
        let handle = server.handle();
        tokio::spawn(server);
        TestAdmin {
            url,
            service,
            handle,
        }
    }

    /// The URL of an administration endpoint, `path` starting after `/admin/v1`.
    pub fn api(&self, path: &str) -> String {
        format!("{}/admin/v1{path}", self.url)
    }
}
