//! An ingestion service for integration tests (this crate's and other services'): started on a loopback
//! port from the same code production runs, on a database the test already has (usually a test token
//! service's, so that the revocation list is shared).

use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::web;
use common::db::Database;
use common::service::Service;
use common::testing::loopback_listener;

use crate::sink::EventSink;
use crate::{IngestConfig, IngestService, IngestState};

pub struct TestIngest {
    /// Base URL, e.g. `http://127.0.0.1:40123`; the `track_url` of bootstrap.
    pub url: String,
    pub service: IngestService,
    handle: ServerHandle,
}

impl Drop for TestIngest {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { handle.stop(false).await });
        }
    }
}

/// Settings for tests: one worker thread, tokens checked against the token service at `auth_url`,
/// revocations never cached.
pub fn test_config(auth_url: &str, database_url: &str) -> IngestConfig {
    let mut config = IngestConfig {
        auth_url: auth_url.to_string(),
        revocation_cache_ms: 0,
        ..IngestConfig::default()
    };
    config.common.public_auth_url = Some(auth_url.to_string());
    config.common.database_url = database_url.to_string();
    config.common.workers = 1;
    config
}

impl TestIngest {
    /// Starts the service with `config` on `db`.
    pub async fn start(config: IngestConfig, db: Database) -> TestIngest {
        let service = IngestService::with_database(config, db)
            .await
            .expect("ingest service starts");
        TestIngest::serve(service)
    }

    /// Starts the service with `config` on `db`, its tracked events going to `sink`.
    pub async fn start_with_sink(
        config: IngestConfig,
        db: Database,
        sink: Arc<dyn EventSink>,
    ) -> TestIngest {
        IngestService::migrate(&db).await.expect("migrations apply");
        let state = IngestState::with_sink(config, db, sink).expect("ingest state");
        TestIngest::serve(IngestService {
            state: web::Data::new(state),
        })
    }

    fn serve(service: IngestService) -> TestIngest {
        let (listener, url) = loopback_listener();
        let server = service.serve(listener).expect("ingest server");
        let handle = server.handle();
        tokio::spawn(server);
        TestIngest {
            url,
            service,
            handle,
        }
    }
}
