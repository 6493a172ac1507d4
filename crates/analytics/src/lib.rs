//! The transcript analytics service: configuration of companies, organizations and folders, calls added
//! to folders, their metadata and search, with the bus workers that keep the search index up to date and
//! carry out deletions (docs/analytics-api.md). Its tables are the `analytics-store` crate's, its rules the
//! `scoring` crate's; it reaches the object store, the search index and the bus through the ports of
//! `common`, whose adapters `ports` picks from the configuration.

pub mod access;
pub mod apps;
pub mod calls;
pub mod config;
pub mod error;
pub mod group_commit;
pub mod jobs;
pub mod metadata;
pub mod openapi;
pub mod orphans;
pub mod outbox;
pub mod ports;
pub mod provision;
pub mod routes;
pub mod scopes;
pub mod state;
pub mod topics;
pub mod transcription;
pub mod worker;

#[cfg(feature = "testing")]
pub mod testing;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::web;
use common::db::Database;
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::service::Service;

pub use config::AnalyticsConfig;
pub use state::{AnalyticsState, Ports};

/// The OpenAPI document of the analytics service, generated from its handlers and types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::document()
}

/// The console's runner of a page's CPU work: a job of the matching pool in the company's turn.
fn pages_runner(pool: apps::pool::MatchPool) -> console::offload::Runner {
    std::sync::Arc::new(move |company: &str, job: console::offload::Job| {
        let (pool, company) = (pool.clone(), company.to_string());
        Box::pin(async move { pool.run(&company, job).await.map_err(|e| e.to_string()) })
    })
}

/// A ready-to-serve analytics service: migrated database, chosen adapters, shared state.
#[derive(Clone)]
pub struct AnalyticsService {
    pub state: web::Data<AnalyticsState>,
    /// The web console, served beside the API (none without a server key to derive its keys from).
    pub console: Option<web::Data<console::Console>>,
}

impl AnalyticsService {
    /// A service on adapters the caller chose (tests pair adapters this way).
    pub fn with_ports(
        config: AnalyticsConfig,
        db: Database,
        ports: Ports,
    ) -> anyhow::Result<AnalyticsService> {
        let (settings, key) = (config.console(), config.common.secret().ok());
        let state = web::Data::new(AnalyticsState::new(config, db.clone(), ports)?);
        // The console's pages do their CPU work on the matching pool, a fair share per company.
        let console = key.map(|key| {
            let runner = pages_runner(state.matching.clone());
            web::Data::new(console::Console::new(settings, db, &key, runner))
        });
        Ok(AnalyticsService { state, console })
    }

    /// Starts the bus workers (reindexing, deletions) on this process.
    pub fn spawn_workers(&self) -> worker::Workers {
        jobs::spawn(self.state.clone().into_inner())
    }

    /// Serves only the operational endpoints (`/healthz`, `/readyz`, `/metrics`), for a process that runs
    /// the workers alone and must still answer its orchestrator's probes.
    pub fn serve_operations(&self, listener: TcpListener) -> std::io::Result<Server> {
        self.serve_with(listener, false)
    }

    fn serve_with(&self, listener: TcpListener, api: bool) -> std::io::Result<Server> {
        let state = self.state.clone();
        let console = self.console.clone();
        let probe = state.clone();
        let counted = state.clone().into_inner();
        let waiting = counted.clone();
        let spec = ServerSpec {
            name: Self::NAME,
            // The workers' process documents what it serves: the operational endpoints alone.
            openapi: if api {
                openapi()
            } else {
                common::http::with_operational_endpoints(
                    utoipa::openapi::OpenApiBuilder::new()
                        .info(utoipa::openapi::Info::new("Speech platform analytics workers", "1.0.0"))
                        .build(),
                )
            },
            readiness: Readiness::new(move || readiness(probe.clone().into_inner())),
            metrics: HttpMetrics::new(Self::NAME)
                .with_sampled_gauge(
                    "bus_dead_letters",
                    "Messages set aside as dead letters, by bus topic",
                    &["topic"],
                    move || {
                        let state = counted.clone();
                        async move { jobs::dead::counts(&state).await }
                    },
                )
                .with_sampled_gauge(
                    "bus_waiting",
                    "Messages waiting their company's turn in the service's database, by bus topic \
                     and company",
                    &["topic", "company"],
                    move || {
                        let state = waiting.clone();
                        async move { jobs::dead::waiting(&state).await }
                    },
                ),
            workers: state.config.common.workers,
            limits: state.config.common.http_limits(),
            answer: error::server_answer,
        };
        serve(spec, listener, move |cfg| {
            cfg.app_data(state.clone());
            if api {
                cfg.configure(routes::configure);
                if let Some(console) = &console {
                    cfg.configure(console::configure(console.clone()));
                }
            }
        })
    }
}

/// Every dependency by name: the database, the bus (RabbitMQ, or the database that holds the embedded
/// one), the object store and the search index, asked at once.
async fn readiness(state: Arc<AnalyticsState>) -> Vec<(&'static str, bool)> {
    let (database, bus, objects, search) = tokio::join!(
        state.db.ping(),
        state.bus.ready(),
        state.objects.list("", None, 1),
        state.search.ready(),
    );
    vec![
        ("database", database),
        ("bus", bus.is_ok()),
        ("object_store", objects.is_ok()),
        ("search_index", search.is_ok()),
    ]
}

#[async_trait::async_trait]
impl Service for AnalyticsService {
    const NAME: &'static str = "analytics";
    type Config = AnalyticsConfig;

    /// Applies the migrations the analytics service needs: its own tables, the bus's outbox and the
    /// revocation list it reads.
    async fn migrate(db: &Database) -> anyhow::Result<()> {
        db.migrate(&analytics_store::MIGRATIONS).await?;
        let moved = analytics_store::move_category_rollups(db).await?;
        if moved > 0 {
            tracing::info!(
                rows = moved,
                "moved the category rollup into its packed rows"
            );
        }
        db.migrate(&common::bus::MIGRATIONS).await?;
        db.migrate(&revocation::MIGRATIONS).await?;
        db.migrate(&console::MIGRATIONS).await?;
        Ok(())
    }

    /// The service on `db`, migrated, with the adapters the configuration names.
    async fn with_database(
        config: AnalyticsConfig,
        db: Database,
    ) -> anyhow::Result<AnalyticsService> {
        Self::migrate(&db).await?;
        let ports = ports::from_config(&config, &db).await?;
        AnalyticsService::with_ports(config, db, ports)
    }

    fn serve(&self, listener: TcpListener) -> std::io::Result<Server> {
        self.serve_with(listener, true)
    }
}
