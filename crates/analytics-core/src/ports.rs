//! The adapters of the service's three ports, chosen once at start-up from the configuration alone:
//! the object store is S3 when `s3_endpoint` is set and a directory under `data_dir`
//! otherwise; the search index is Meilisearch when `meili_url` is set and an embedded index under
//! `data_dir` otherwise; the bus is RabbitMQ when `amqp_url` is set (the outbox in the database,
//! relayed to the broker, each topic's window as its workers ask) and a queue in the service's database
//! otherwise.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use common::bus::{Bus, DatabaseQueue, RabbitBus, RabbitOptions, RetryPolicy};
use common::db::Database;
use common::objects::{LocalDirectory, ObjectStore, S3Store};
use common::search::{EmbeddedIndex, MeiliIndex, SearchIndex};

use crate::config::AnalyticsConfig;
use crate::state::Ports;

/// The adapters `config` names; `windows` are the RabbitMQ relay's window of each topic by name, as the
/// workers of the topic take its messages.
pub async fn from_config(
    config: &AnalyticsConfig,
    db: &Database,
    windows: Vec<(String, u32)>,
) -> anyhow::Result<Ports> {
    let objects: Arc<dyn ObjectStore> = match config.s3_options() {
        Some(options) => {
            let (endpoint, bucket) = (options.endpoint.clone(), options.bucket.clone());
            Arc::new(
                S3Store::connect(options)
                    .await
                    .with_context(|| format!("opening bucket {bucket} at {endpoint}"))?,
            )
        }
        None => {
            let dir = config.data_dir.join("objects");
            Arc::new(
                LocalDirectory::open(&dir)
                    .with_context(|| format!("opening the object directory {}", dir.display()))?,
            )
        }
    };
    let search: Arc<dyn SearchIndex> = match config.meili_url.as_deref().filter(|u| !u.is_empty()) {
        Some(url) => Arc::new(
            MeiliIndex::connect(
                url,
                crate::config::filled_secret(&config.meili_key),
                &config.meili_index,
            )
            .await
            .with_context(|| format!("connecting to Meilisearch at {url}"))?,
        ),
        None => {
            let dir = config.data_dir.join("search");
            Arc::new(
                EmbeddedIndex::open(&dir)
                    .with_context(|| format!("opening the search index {}", dir.display()))?,
            )
        }
    };
    let bus: Arc<dyn Bus> = match crate::config::filled_secret(&config.amqp_url) {
        Some(url) => {
            let options = RabbitOptions {
                topics: messages::topics::ANALYTICS_WORKERS
                    .iter()
                    .map(|t| t.to_string())
                    .collect(),
                windows,
                ..RabbitOptions::default()
            };
            Arc::new(
                RabbitBus::connect(url, db.clone(), RetryPolicy::default(), options)
                    .await
                    .with_context(|| {
                        format!("connecting to RabbitMQ at {}", common::db::redact(url))
                    })?,
            )
        }
        None => Arc::new(DatabaseQueue::new(
            db.clone(),
            RetryPolicy::default(),
            Duration::from_millis(config.job_lease_ms),
        )),
    };
    Ok(Ports {
        bus,
        objects,
        search,
    })
}
