//! What a service answers on its address while it is still reaching its dependencies: alive
//! (`/healthz` 200), not ready (`/readyz` 503, saying how many attempts failed), and every other request
//! 503 in the platform's error format with `Retry-After`, so that probes and clients see a service
//! starting rather than a refused connection or a process that exits and restarts.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::json;

use crate::{ApiError, ErrorCode};

/// How the start-up is going, shared between the attempts and the answers.
#[derive(Clone, Default)]
pub struct Starting {
    failed_attempts: Arc<AtomicU64>,
}

impl Starting {
    /// Counts an attempt that found a dependency unreachable.
    pub fn failed(&self) {
        self.failed_attempts.fetch_add(1, Ordering::Relaxed);
    }

    fn failed_attempts(&self) -> u64 {
        self.failed_attempts.load(Ordering::Relaxed)
    }
}

/// Serves the answers of a starting service on `listener` (one worker: nothing here is heavy) until its
/// handle stops it.
pub fn serve_starting(listener: TcpListener, starting: Starting) -> std::io::Result<Server> {
    let starting = web::Data::new(starting);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(starting.clone())
            .route("/healthz", web::get().to(super::ops::healthz))
            .route("/readyz", web::get().to(readyz))
            .default_service(web::to(unavailable))
    })
    .workers(1)
    .shutdown_timeout(5)
    .disable_signals()
    .listen(listener)?
    .run();
    Ok(server)
}

async fn readyz(starting: web::Data<Starting>) -> HttpResponse {
    HttpResponse::ServiceUnavailable().json(json!({
        "status": "starting",
        "checks": {"dependencies": "failing"},
        "failed_attempts": starting.failed_attempts(),
    }))
}

async fn unavailable() -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(
        ErrorCode::Unavailable,
        "the service is starting and cannot reach its dependencies yet; try again shortly",
    )
    .with_retry_after(1))
}
