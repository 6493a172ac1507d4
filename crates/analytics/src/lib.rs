//! The transcript analytics service (docs/analytics-api.md): the core (`analytics-core`: configuration,
//! calls, metadata, search, applications, scores and statistics) and transcription (`transcription`)
//! served as one API with one OpenAPI document, with the web console beside them, and the bus workers of
//! both on one stop signal. This crate only puts them together: migrations, adapters, routes, workers
//! and probes.

pub mod openapi;

#[cfg(feature = "testing")]
pub mod testing;

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::web;
use common::db::Database;
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::service::Service;

use analytics_core::worker::Workers;
use analytics_core::{jobs, ports};
pub use analytics_core::{AnalyticsConfig, AnalyticsState, Ports};
use transcription::TranscriptionState;

/// The OpenAPI document of the analytics service, generated from its handlers and types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::document()
}

/// The console's runner of a page's CPU work: a job of the matching pool in the company's turn.
fn pages_runner(pool: analytics_core::apps::pool::MatchPool) -> console::offload::Runner {
    std::sync::Arc::new(move |company: &str, job: console::offload::Job| {
        let (pool, company) = (pool.clone(), company.to_string());
        Box::pin(async move { pool.run(&company, job).await.map_err(|e| e.to_string()) })
    })
}

/// A ready-to-serve analytics service: migrated database, chosen adapters, shared state.
#[derive(Clone)]
pub struct AnalyticsService {
    pub state: web::Data<AnalyticsState>,
    /// Transcription's recognizer and callback client, on the same state.
    pub transcription: web::Data<TranscriptionState>,
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
        let state = web::Data::new(AnalyticsState::new(config, db.clone(), ports));
        let transcription = web::Data::new(TranscriptionState::new(state.clone().into_inner())?);
        // The console's pages do their CPU work on the matching pool, a fair share per company.
        let console = key.map(|key| {
            let runner = pages_runner(state.matching.clone());
            web::Data::new(console::Console::new(settings, db, &key, runner))
        });
        Ok(AnalyticsService {
            state,
            transcription,
            console,
        })
    }

    /// Starts the bus workers of the configured topics, the core's and transcription's, on this process.
    pub fn spawn_workers(&self) -> Workers {
        let mut workers = Workers::new();
        jobs::spawn(self.state.clone().into_inner(), &mut workers);
        transcription::jobs::spawn(self.transcription.clone().into_inner(), &mut workers);
        workers
    }

    /// The RabbitMQ relay's window of every topic by name, as its workers take them.
    pub fn windows() -> Vec<(String, u32)> {
        let mut windows = jobs::windows();
        windows.extend(transcription::jobs::windows());
        windows
            .into_iter()
            .map(|(topic, window)| (topic.name().to_string(), window))
            .collect()
    }

    /// Serves only the operational endpoints (`/healthz`, `/readyz`, `/metrics`), for a process that runs
    /// the workers alone and must still answer its orchestrator's probes.
    pub fn serve_operations(&self, listener: TcpListener) -> std::io::Result<Server> {
        self.serve_with(listener, false)
    }

    fn serve_with(&self, listener: TcpListener, api: bool) -> std::io::Result<Server> {
        let state = self.state.clone();
        let transcription = self.transcription.clone();
        let console = self.console.clone();
        let probe = state.clone();
        let counted = state.clone().into_inner();
        let waiting = counted.clone();
        let reads = counted.clone();
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
                )
                .with_sampled_gauge(
                    "reads_waiting",
                    "Reads of the API waiting for their company's turn, by company",
                    &["company"],
                    move || {
                        let waiting = reads.reads.waiting();
                        async move {
                            waiting
                                .into_iter()
                                .map(|(company, n)| (vec![company], n as i64))
                                .collect()
                        }
                    },
                ),
            workers: state.config.common.workers,
            limits: state.config.common.http_limits(),
            answer: analytics_core::error::server_answer,
        };
        serve(spec, listener, move |cfg| {
            cfg.app_data(state.clone());
            cfg.app_data(transcription.clone());
            if api {
                cfg.configure(analytics_core::routes::configure);
                cfg.configure(transcription::routes::configure);
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
        let ports = ports::from_config(&config, &db, Self::windows()).await?;
        AnalyticsService::with_ports(config, db, ports)
    }

    fn serve(&self, listener: TcpListener) -> std::io::Result<Server> {
        self.serve_with(listener, true)
    }
}

#[cfg(test)]
mod tests {
    use analytics_core::topics::Topic;

    /// Every topic has one relay window, given by the crate whose workers take it.
    #[test]
    fn every_topic_has_one_window() {
        let windows = super::AnalyticsService::windows();
        for topic in Topic::ALL {
            let given = windows.iter().filter(|(name, _)| name == topic.name());
            assert_eq!(given.count(), 1, "{}: {windows:?}", topic.name());
        }
        assert_eq!(windows.len(), Topic::ALL.len(), "{windows:?}");
        assert!(
            windows.iter().all(|(_, window)| *window >= 1),
            "{windows:?}"
        );
    }
}
