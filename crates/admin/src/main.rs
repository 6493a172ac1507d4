//! `admin-service`: the administration API on its own, configured from the environment (see
//! `AdminConfig`).

use admin::AdminService;

/// mimalloc rather than glibc's malloc: see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    common::service::run::<AdminService>().await
}
