//! `analytics-service`: the analytics API with its bus workers, configured from the environment (see
//! `AnalyticsConfig`). `analytics-service worker` runs the workers alone, to scale them apart from the API;
//! it then answers only `/healthz`, `/readyz` and `/metrics` on its address. Either waits for a dependency
//! it cannot reach at start, answering that it is starting (`common::service`). `dead-letters <topic>` and
//! `replay-dead <topic>` list a topic's dead letters and put them back in its queue (`jobs::dead`).

use analytics::AnalyticsService;
use common::service::{listen_and_connect, Service};

/// mimalloc rather than glibc's malloc: see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (config, _telemetry) = common::service::start::<AnalyticsService>()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let worker_only = match args.first().map(String::as_str) {
        None => false,
        Some("worker") => true,
        Some(command @ ("dead-letters" | "replay-dead")) => {
            let (Some(topic), limit) = (args.get(1), args.get(2)) else {
                anyhow::bail!("usage: analytics-service {command} <topic> [limit]");
            };
            let limit = limit.map(|l| l.parse::<u64>()).transpose()?;
            let service = AnalyticsService::connect(config).await?;
            let replay = command == "replay-dead";
            return analytics_core::jobs::dead::command(&service.state, replay, topic, limit).await;
        }
        Some(other) => anyhow::bail!(
            "unknown command {other:?}: run with no argument, or `worker`, `dead-letters <topic> \
             [limit]`, `replay-dead <topic> [limit]`"
        ),
    };
    let addr = config.common.addr.clone();
    let run_workers = config.run_workers || worker_only;
    let Some((service, listener)) = listen_and_connect::<AnalyticsService>(config).await? else {
        return Ok(());
    };
    let workers = run_workers.then(|| service.spawn_workers());
    if worker_only {
        // The workers' process answers the operational endpoints only, for its probes.
        let server = service.serve_operations(listener)?;
        tracing::info!(%addr, "analytics workers running");
        common::http::run_until_signal(vec![server]).await?;
    } else {
        let server = service.serve(listener)?;
        tracing::info!(%addr, "analytics-service ready");
        common::http::run_until_signal(vec![server]).await?;
    }
    if let Some(workers) = workers {
        workers.stop().await;
    }
    Ok(())
}
