//! Signal handling is owned by the binaries, not by actix: one SIGINT or SIGTERM stops every server in
//! the process gracefully (in-flight requests finish, then workers stop).

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM.
pub async fn wait_for_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("SIGINT received, shutting down"),
        _ = terminate => tracing::info!("SIGTERM received, shutting down"),
    }
}

/// Runs `servers` until the first SIGINT or SIGTERM, then stops them all gracefully; the binaries' main
/// loop.
pub async fn run_until_signal(servers: Vec<actix_web::dev::Server>) -> std::io::Result<()> {
    let handles: Vec<_> = servers.iter().map(|s| s.handle()).collect();
    tokio::spawn(async move {
        wait_for_signal().await;
        for handle in handles {
            handle.stop(true).await;
        }
    });
    futures_util::future::try_join_all(servers).await?;
    Ok(())
}
