//! What every handler of the ingestion service shares: the database, the sink of tracked events, the
//! enrichment lookups, the token verifier and the projects recently looked up by app key.

use std::sync::Arc;
use std::time::Duration;

use common::cache::TtlCache;
use common::db::Database;
use common::jwt::JwtVerifier;

use crate::config::{IngestConfig, Network};
use crate::enrich::Enricher;
use crate::limit::RateLimit;
use crate::model::Project;
use crate::sink::EventSink;
use crate::writer::Writer;

/// How long a replica reuses a project looked up by app key (a changed `server_time` or a deleted
/// project takes effect after at most this long on every replica).
pub const PROJECT_CACHE: Duration = Duration::from_secs(5);

pub struct IngestState {
    pub config: IngestConfig,
    pub db: Database,
    /// Where `/track` stores its events: the database writer tasks, unless a test chose another.
    pub sink: Arc<dyn EventSink>,
    pub enricher: Enricher,
    pub verifier: JwtVerifier,
    pub proxies: Vec<Network>,
    /// Projects by app key; `None` remembers an unknown key, so a flood of them costs no queries.
    pub projects: TtlCache<String, Option<Project>>,
    /// Revocation answers per token id (`revocation_cache_ms`).
    pub revocations: TtlCache<String, bool>,
    /// Events per second per project.
    pub limit: RateLimit,
}

impl IngestState {
    /// Opens the geo database and starts the writer tasks (on the current runtime).
    pub fn new(config: IngestConfig, db: Database) -> anyhow::Result<IngestState> {
        let writer = Writer::start(
            db.clone(),
            config.writers,
            config.dedup_window_secs * 1000,
            config.retention_days,
        );
        IngestState::with_sink(config, db, Arc::new(writer))
    }

    /// The state with `sink` in place of the writer tasks.
    pub fn with_sink(
        config: IngestConfig,
        db: Database,
        sink: Arc<dyn EventSink>,
    ) -> anyhow::Result<IngestState> {
        let enricher = Enricher::open(config.geoip_db.as_deref())?;
        let proxies = config.proxies()?;
        Ok(IngestState {
            verifier: JwtVerifier::new(config.verifier_config()),
            revocations: TtlCache::new(Duration::from_millis(config.revocation_cache_ms), 100_000),
            projects: TtlCache::new(PROJECT_CACHE, 100_000),
            limit: RateLimit::new(
                config.rate_limit_events_per_sec,
                config.rate_limit_burst_secs,
            ),
            enricher,
            proxies,
            sink,
            db,
            config,
        })
    }

    /// The project of `app_key`, from the cache when it was looked up lately.
    pub async fn project(&self, app_key: &str) -> Result<Option<Project>, common::db::StoreError> {
        if let Some(known) = self.projects.get(app_key) {
            return Ok(known);
        }
        let project = crate::store::project(&self.db, app_key).await?;
        self.projects.insert(app_key.to_string(), project.clone());
        Ok(project)
    }
}
