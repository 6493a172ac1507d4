//! The event-ingestion service: tracking batches posted to a project's app key are validated event by
//! event, enriched (browser and operating system from the user agent, place from the address) and stored
//! before the answer; a project's company reads them back with a bearer token (docs/ingest-api.md).

pub mod access;
pub mod config;
pub mod enrich;
pub mod limit;
pub mod model;
pub mod openapi;
pub mod retention;
pub mod routes;
pub mod sink;
pub mod state;
pub mod store;
pub mod track;
pub mod writer;

#[cfg(feature = "testing")]
pub mod testing;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::web;
use common::db::Database;
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::service::Service;

pub use config::IngestConfig;
pub use state::IngestState;

/// The OpenAPI document of the ingestion service.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::document()
}

/// A ready-to-serve ingestion service: migrated database, writer tasks, shared state.
#[derive(Clone)]
pub struct IngestService {
    pub state: web::Data<IngestState>,
}

async fn readiness(state: Arc<IngestState>) -> Vec<(&'static str, bool)> {
    vec![("database", state.db.ping().await)]
}

#[async_trait::async_trait]
impl Service for IngestService {
    const NAME: &'static str = "ingest";
    type Config = IngestConfig;

    /// Applies the migrations the ingestion service needs: its own tables and the revocation list it reads.
    async fn migrate(db: &Database) -> anyhow::Result<()> {
        db.migrate(&store::MIGRATIONS).await?;
        db.migrate(&revocation::MIGRATIONS).await?;
        Ok(())
    }

    async fn with_database(config: IngestConfig, db: Database) -> anyhow::Result<IngestService> {
        Self::migrate(&db).await?;
        Ok(IngestService {
            state: web::Data::new(IngestState::new(config, db)?),
        })
    }

    fn serve(&self, listener: TcpListener) -> std::io::Result<Server> {
        let state = self.state.clone();
        let probe = state.clone();
        let spec = ServerSpec {
            name: Self::NAME,
            openapi: openapi(),
            readiness: Readiness::new(move || readiness(probe.clone().into_inner())),
            metrics: HttpMetrics::new(Self::NAME),
            workers: state.config.common.workers,
            limits: state.config.common.http_limits(),
            // `/track` answers a body that arrives too slowly as any other it cannot read (200).
            answer: common::http::api_error_answer,
        };
        serve(spec, listener, move |cfg| {
            cfg.app_data(state.clone());
            cfg.configure(routes::configure);
        })
    }
}
