//! `auth-service`: the token service on its own, configured from the environment (see `AuthConfig`).

use auth::{AuthConfig, AuthService};

/// mimalloc rather than glibc's malloc: see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    common::private_files::keep_new_files_private();
    let config: AuthConfig = common::config::load()?;
    let _telemetry = common::telemetry::init("auth", &config.common.log_format);
    // Thousands of client connections need more than the default soft limit of open files.
    common::http::fd_limit::raise(1);
    let addr = config.common.addr.clone();
    let service = AuthService::connect(config).await?;
    let server = service.serve(common::http::bind(&addr)?)?;
    tracing::info!(%addr, "auth-service listening");
    common::http::run_until_signal(vec![server]).await?;
    Ok(())
}
