//! The state every handler and worker of the analytics service shares: the database, the three ports
//! (bus, object store, search index) with the adapters chosen at start-up, the token verifier, and the
//! compiled applications. Transcription keeps its recognizer and callback client in its own crate.

use std::sync::Arc;
use std::time::Duration;

use common::bus::Bus;
use common::cache::TtlCache;
use common::db::Database;
use common::jwt::JwtVerifier;
use common::objects::ObjectStore;
use common::search::SearchIndex;

use crate::admission::Admission;
use crate::apps::pool::MatchPool;
use crate::apps::AppCache;
use crate::calls::upload::CallBatches;
use crate::config::AnalyticsConfig;
use crate::metadata::request::MetadataBatches;
use callbacks::guard::AddressPolicy;

pub struct AnalyticsState {
    pub config: AnalyticsConfig,
    pub db: Database,
    pub bus: Arc<dyn Bus>,
    pub objects: Arc<dyn ObjectStore>,
    pub search: Arc<dyn SearchIndex>,
    pub verifier: JwtVerifier,
    /// Revocation answers per token id (`revocation_cache_ms`).
    pub revocations: TtlCache<String, bool>,
    /// Compiled applications by company, name and revision.
    pub apps: AppCache,
    /// Where calls are matched and scored, a fair share per company.
    pub matching: MatchPool,
    /// The reads under way and waiting, a fair share per company.
    pub reads: Admission,
    /// Where callbacks may go: a folder's callback address is checked against it when it is set.
    pub callback_addresses: AddressPolicy,
    /// Metadata requests waiting to be committed together.
    pub metadata_batches: Arc<MetadataBatches>,
    /// Uploaded calls waiting to be committed together.
    pub call_batches: Arc<CallBatches>,
}

/// Metadata batches (or batches of calls) committed at once on PostgreSQL: enough that a batch waiting
/// for a locked call (or folder) holds up few requests, few enough to keep batches large.
const POSTGRES_SHARDS: usize = 4;

/// The adapters of the three ports, as chosen from the configuration.
pub struct Ports {
    pub bus: Arc<dyn Bus>,
    pub objects: Arc<dyn ObjectStore>,
    pub search: Arc<dyn SearchIndex>,
}

impl AnalyticsState {
    /// The state of a service on `ports`.
    pub fn new(config: AnalyticsConfig, db: Database, ports: Ports) -> AnalyticsState {
        AnalyticsState {
            verifier: JwtVerifier::new(config.verifier_config()),
            revocations: TtlCache::new(Duration::from_millis(config.revocation_cache_ms), 100_000),
            apps: AppCache::new(
                crate::apps::cache::DEFAULT_CAPACITY,
                config.scanner_memory_mb.saturating_mul(1 << 20),
            )
            .with_scan_steps(config.scan_budget_steps),
            matching: MatchPool::new(config.matchers()),
            reads: Admission::new(config.reads_per_company(), config.read_queue_per_company),
            callback_addresses: config.callback_settings().addresses(),
            metadata_batches: MetadataBatches::new(
                match db {
                    Database::Postgres(..) => POSTGRES_SHARDS,
                    Database::Sqlite(..) => 1,
                },
                crate::metadata::request::MOST,
            ),
            // By folder: on PostgreSQL a batch holds its folder's row, so batches of one folder take
            // turns anyway, and those of other folders go on meanwhile.
            call_batches: CallBatches::new(
                match db {
                    Database::Postgres(..) => POSTGRES_SHARDS,
                    Database::Sqlite(..) => 1,
                },
                crate::calls::upload::MOST,
            ),
            bus: ports.bus,
            objects: ports.objects,
            search: ports.search,
            db,
            config,
        }
    }
}
