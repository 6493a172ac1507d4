//! An analytics service for integration tests (this crate's and other services'): started on a loopback
//! port from the same code production runs, on a database the test already has (usually a test token
//! service's, so that the revocation list is shared), with its embedded adapters under a fresh directory
//! that is removed afterwards. Workers run unless the test starts them itself.

use std::path::PathBuf;

use actix_web::dev::ServerHandle;
use common::db::Database;
use common::service::Service;
use common::testing::loopback_listener;

use crate::{AnalyticsConfig, AnalyticsService};
use analytics_core::worker::Workers;

pub struct TestAnalytics {
    /// Base URL, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    pub service: AnalyticsService,
    pub workers: Option<Workers>,
    pub data_dir: PathBuf,
    handle: ServerHandle,
}

impl Drop for TestAnalytics {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        if let Some(workers) = self.workers.take() {
            workers.abort();
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { handle.stop(false).await });
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// Settings for tests: one worker thread, tokens checked against the token service at `auth_url`,
/// revocations never cached, short job leases.
pub fn test_config(auth_url: &str, database_url: &str, data_dir: PathBuf) -> AnalyticsConfig {
    let mut config = AnalyticsConfig {
        auth_url: auth_url.to_string(),
        data_dir,
        revocation_cache_ms: 0,
        job_lease_ms: 5_000,
        ..AnalyticsConfig::default()
    };
    config.common.public_auth_url = Some(auth_url.to_string());
    config.common.database_url = database_url.to_string();
    config.common.workers = 1;
    // The key callbacks are signed under (every real configuration has one).
    config.common.secret_key = Some(common::secrets::SecretKey::generate().to_base64().into());
    config
}

/// A fresh directory for one test's embedded adapters.
pub fn temp_data_dir() -> PathBuf {
    std::env::temp_dir().join(format!(
        "speech-analytics-{}",
        uuid::Uuid::new_v4().simple()
    ))
}

impl TestAnalytics {
    /// Starts on `db` (at `database_url`), verifying tokens of the token service at `auth_url`, with its
    /// workers running. `adjust` changes the configuration before the start.
    pub async fn start(
        db: &Database,
        database_url: &str,
        auth_url: &str,
        adjust: impl FnOnce(&mut AnalyticsConfig),
    ) -> TestAnalytics {
        let data_dir = temp_data_dir();
        let mut config = test_config(auth_url, database_url, data_dir.clone());
        adjust(&mut config);
        let service = AnalyticsService::with_database(config, db.clone())
            .await
            .expect("analytics service starts");
        TestAnalytics::serve(service, data_dir)
    }

    /// Starts on adapters the test chose (a test broker's bus, test S3 and Meilisearch servers).
    pub async fn start_on(
        db: &Database,
        database_url: &str,
        auth_url: &str,
        adjust: impl FnOnce(&mut AnalyticsConfig),
        ports: crate::Ports,
    ) -> TestAnalytics {
        let data_dir = temp_data_dir();
        let mut config = test_config(auth_url, database_url, data_dir.clone());
        adjust(&mut config);
        AnalyticsService::migrate(db)
            .await
            .expect("migrations apply");
        let service = AnalyticsService::with_ports(config, db.clone(), ports)
            .expect("the test configuration builds a service");
        TestAnalytics::serve(service, data_dir)
    }

    fn serve(service: AnalyticsService, data_dir: PathBuf) -> TestAnalytics {
        let (listener, url) = loopback_listener();
        let server = service.serve(listener).expect("analytics service serves");
        let handle = server.handle();
        tokio::spawn(server);
        let workers = Some(service.spawn_workers());
        TestAnalytics {
            url,
            service,
            workers,
            data_dir,
            handle,
        }
    }
}
