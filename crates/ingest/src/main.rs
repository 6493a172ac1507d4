//! `ingest-service`: the event-ingestion API, configured from the environment (see `IngestConfig`).

use ingest::IngestService;

/// mimalloc rather than glibc's malloc: see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    common::service::run::<IngestService>().await
}
