//! `auth-service`: the token service on its own, configured from the environment (see `AuthConfig`).

use auth::AuthService;

/// mimalloc rather than glibc's malloc: see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    common::service::run::<AuthService>().await
}
