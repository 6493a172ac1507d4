//! The skeleton of a service. Each of the four fills in what is its own (its configuration, the
//! migrations it needs, its state on a database, what it serves on a listener); the start-up they share
//! is written here once: loading and checking the configuration, telemetry, the open-files limit, the
//! database, the listener, and serving until a signal.

use std::net::TcpListener;

use actix_web::dev::Server;
use async_trait::async_trait;

use crate::config::ServiceConfig;
use crate::db::Database;
use crate::telemetry::TelemetryGuard;

#[async_trait]
pub trait Service: Sized + Send {
    /// The service's name in logs and metrics (`admin` for `admin-service`).
    const NAME: &'static str;
    type Config: ServiceConfig + Send + 'static;

    /// Applies the migrations the service needs, in order: its own tables' and those it reads.
    async fn migrate(db: &Database) -> anyhow::Result<()>;

    /// The service on `db`, migrated, its state built.
    async fn with_database(config: Self::Config, db: Database) -> anyhow::Result<Self>;

    /// Serves the API and the operational endpoints on `listener`, starting the background tasks.
    fn serve(&self, listener: TcpListener) -> std::io::Result<Server>;

    /// The service on a new pool of the configured database.
    async fn connect(config: Self::Config) -> anyhow::Result<Self> {
        let (url, connections) = {
            let common = config.common();
            (common.database_url.clone(), common.db_max_connections)
        };
        let db = Database::connect(&url, connections).await?;
        Self::with_database(config, db).await
    }
}

/// Prepares the process to run `S`: new files private, the configuration loaded and checked, logs and
/// traces set up (kept flowing while the guard lives), and an open-files limit that thousands of client
/// connections fit in.
pub fn start<S: Service>() -> anyhow::Result<(S::Config, TelemetryGuard)> {
    crate::private_files::keep_new_files_private();
    let config: S::Config = crate::config::load()?;
    let telemetry = crate::telemetry::init(S::NAME, &config.common().log_format);
    crate::http::fd_limit::raise(1);
    Ok((config, telemetry))
}

/// The life of a service binary: `start`, connect, serve on the configured address until a signal.
pub async fn run<S: Service>() -> anyhow::Result<()> {
    let (config, _telemetry) = start::<S>()?;
    let addr = config.common().addr.clone();
    let service = S::connect(config).await?;
    let server = service.serve(crate::http::bind(&addr)?)?;
    tracing::info!(%addr, "{}-service listening", S::NAME);
    crate::http::run_until_signal(vec![server]).await?;
    Ok(())
}
