//! The skeleton of a service. Each of the four fills in what is its own (its configuration, the
//! migrations it needs, its state on a database, what it serves on a listener); the start-up they share
//! is written here once: loading and checking the configuration, telemetry, the open-files limit, the
//! database, the listener, and serving until a signal. A dependency that cannot be reached at start
//! (the database, the broker, the search engine, the object store) is waited for, with backoff, while the
//! address answers that the service is starting; only a wrong setting ends the process.

use std::future::Future;
use std::net::TcpListener;
use std::time::Duration;

use actix_web::dev::Server;
use async_trait::async_trait;

use crate::config::ServiceConfig;
use crate::db::Database;
use crate::telemetry::TelemetryGuard;

#[async_trait]
pub trait Service: Sized + Send {
    /// The service's name in logs and metrics (`admin` for `admin-service`).
    const NAME: &'static str;
    type Config: ServiceConfig + Clone + Send + 'static;

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

/// The life of a service binary: `start`, bind the configured address, connect (answering there that
/// the service is starting until it can), serve until a signal.
pub async fn run<S: Service>() -> anyhow::Result<()> {
    let (config, _telemetry) = start::<S>()?;
    let addr = config.common().addr.clone();
    let Some((service, listener)) = listen_and_connect::<S>(config).await? else {
        return Ok(());
    };
    let server = service.serve(listener)?;
    tracing::info!(%addr, "{}-service ready", S::NAME);
    crate::http::run_until_signal(vec![server]).await?;
    Ok(())
}

/// Binds the configured address and connects `S` (`connect_patiently`, until a signal): the service and
/// the listener to serve it on, or `None` when a signal came first.
pub async fn listen_and_connect<S: Service>(
    config: S::Config,
) -> anyhow::Result<Option<(S, TcpListener)>> {
    let addr = config.common().addr.clone();
    let listener = crate::http::bind(&addr)?;
    tracing::info!(%addr, "{}-service listening", S::NAME);
    let stop = crate::http::wait_for_signal();
    let service = connect_patiently::<S, _>(config, &listener, stop).await?;
    Ok(service.map(|service| (service, listener)))
}

/// The first wait after an attempt that found a dependency unreachable; it doubles up to the second.
const FIRST_RETRY: Duration = Duration::from_millis(500);
const LONGEST_RETRY: Duration = Duration::from_secs(30);

/// Connects `S`, trying again with backoff while a dependency is unreachable, and meanwhile answers on
/// `listener` as a starting service (`serve_starting`). `None` when `stop` resolves first (a signal);
/// an error when the configuration is wrong (`is_wrong_setting`), which waiting would not mend.
pub async fn connect_patiently<S: Service, F: Future<Output = ()>>(
    config: S::Config,
    listener: &TcpListener,
    stop: F,
) -> anyhow::Result<Option<S>> {
    let starting = crate::http::Starting::default();
    let server = crate::http::serve_starting(listener.try_clone()?, starting.clone())?;
    let handle = server.handle();
    let answering = tokio::spawn(server);
    tokio::pin!(stop);
    let mut wait = FIRST_RETRY;
    let outcome = loop {
        let attempt = tokio::select! {
            attempt = S::connect(config.clone()) => attempt,
            () = &mut stop => break Ok(None),
        };
        match attempt {
            Ok(service) => break Ok(Some(service)),
            Err(e) if is_wrong_setting(&e) => break Err(e),
            Err(e) => {
                starting.failed();
                tracing::warn!(error = %format!("{e:#}"), retry_in_ms = wait.as_millis() as u64,
                    "{}-service cannot reach a dependency yet", S::NAME);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = &mut stop => break Ok(None),
        }
        wait = (wait * 2).min(LONGEST_RETRY);
    };
    handle.stop(true).await;
    let _ = answering.await;
    outcome
}

/// Whether a failed start is the configuration's fault rather than a dependency's absence: the database
/// refused the configured credentials or has no database of the configured name, or the object store
/// refused the configured key.
pub fn is_wrong_setting(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let database = cause
            .downcast_ref::<sqlx::Error>()
            .and_then(sqlx::Error::as_database_error)
            .and_then(|e| e.code())
            .is_some_and(|code| matches!(code.as_ref(), "28P01" | "28000" | "3D000"));
        let objects = matches!(
            cause.downcast_ref::<crate::objects::ObjectError>(),
            Some(crate::objects::ObjectError::Refused(_))
        );
        database || objects
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::ObjectError;

    #[test]
    fn a_refused_key_is_a_wrong_setting_and_an_unreachable_store_is_not() {
        let refused = anyhow::Error::new(ObjectError::Refused("bucket speech".into()))
            .context("connecting the object store");
        assert!(is_wrong_setting(&refused));
        let unreachable = anyhow::Error::new(ObjectError::Service("connection refused".into()));
        assert!(!is_wrong_setting(&unreachable));
        assert!(!is_wrong_setting(&anyhow::anyhow!(
            "the broker closed the connection"
        )));
    }
}
