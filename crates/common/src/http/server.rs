//! `serve`: builds the HTTP server of a service around its routes, with the operational endpoints and
//! middleware every service has. Tests call it with a listener on port 0, production with the configured
//! address; both run the same code.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};

use super::body_deadline::{self, BodyRules};
use super::connections::{self, Gate};
use super::limits::{ErrorAnswer, HttpLimits};
use super::methods::{self, Methods};
use super::metrics::{self, HttpMetrics};
use super::ops::{self, OpenApiDocument, Readiness};
use super::{extract, fd_limit};

/// Connections past the limits that actix may hold while they are being closed, per worker, before it
/// stops accepting (which would keep `/healthz` out too).
const CLOSING_HEADROOM: usize = 1024;

/// What a service contributes to its server besides its routes.
pub struct ServerSpec {
    pub name: &'static str,
    /// The service's OpenAPI document, served at `/openapi.json` and shown at `/docs/`.
    pub openapi: utoipa::openapi::OpenApi,
    pub readiness: Readiness,
    pub metrics: HttpMetrics,
    /// Worker threads; 0 means one per core.
    pub workers: usize,
    /// Connections and request bodies (`CommonSettings::http_limits`).
    pub limits: HttpLimits,
    /// The service's error format for what the server refuses itself (`api_error_answer` for the
    /// platform's JSON errors).
    pub answer: ErrorAnswer,
}

/// Starts serving on `listener`. The returned `Server` is a future that ends when the server stops; its
/// `handle()` stops it gracefully. Signals are not handled here (see `wait_for_signal`).
pub fn serve<F>(spec: ServerSpec, listener: TcpListener, configure: F) -> std::io::Result<Server>
where
    F: Fn(&mut web::ServiceConfig) + Send + Clone + 'static,
{
    let document = spec.openapi.to_json().map_err(|e| {
        std::io::Error::other(format!("the OpenAPI document does not serialize: {e}"))
    })?;
    let openapi = web::Data::new(OpenApiDocument(std::sync::Arc::new(document)));
    let readiness = web::Data::new(spec.readiness);
    let mut limits = spec.limits;
    let wanted = limits.max_connections + limits.reserved_connections;
    let allowed = fd_limit::connections_within(wanted, spec.name);
    if allowed < wanted {
        limits.reserved_connections = limits.reserved_connections.min(allowed / 2).max(1);
        limits.max_connections = allowed.saturating_sub(limits.reserved_connections).max(1);
    }
    let gate = Arc::new(Gate::new(
        limits.max_connections,
        limits.reserved_connections,
        spec.metrics.connections.clone(),
        spec.metrics.refused_connections.clone(),
        spec.answer,
    ));
    let gate_data = web::Data::new(gate.clone());
    let body_rules = web::Data::new(BodyRules {
        limits: limits.clone(),
        answer: spec.answer,
    });
    let methods = web::Data::new(Methods::of(&spec.openapi, spec.answer));
    let metrics_data = web::Data::new(spec.metrics);
    let workers = if spec.workers == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        spec.workers
    };
    let server = HttpServer::new(move || {
        App::new()
            .wrap(from_fn(methods::allow))
            .wrap(from_fn(body_deadline::limit))
            .wrap(from_fn(connections::reserve))
            .wrap(from_fn(metrics::record))
            .app_data(metrics_data.clone())
            .app_data(gate_data.clone())
            .app_data(body_rules.clone())
            .app_data(methods.clone())
            .app_data(readiness.clone())
            .app_data(openapi.clone())
            .app_data(extract::json_config())
            .app_data(extract::query_config())
            .app_data(extract::path_config())
            .app_data(extract::form_config())
            .route("/healthz", web::get().to(ops::healthz))
            .route("/readyz", web::get().to(ops::readyz))
            .route("/metrics", web::get().to(ops::metrics))
            .route("/openapi.json", web::get().to(ops::openapi))
            .route("/docs", web::get().to(docs_redirect))
            .service(docs_ui())
            .configure(configure.clone())
    })
    .on_connect(move |io, data| gate.on_connect(io, data))
    .workers(workers)
    .max_connections(limits.max_connections + limits.reserved_connections + CLOSING_HEADROOM)
    .backlog(4096)
    .shutdown_timeout(30)
    .client_request_timeout(Duration::from_secs(30))
    .disable_signals()
    .listen(listener)?
    .run();
    Ok(server)
}

/// Swagger UI at `/docs/`, reading the service's own `/openapi.json`; its pages and scripts are compiled
/// into the binary, so the page works with no network beyond the service.
fn docs_ui() -> utoipa_swagger_ui::SwaggerUi {
    utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
        .config(utoipa_swagger_ui::Config::from("/openapi.json"))
}

/// `/docs` leads to `/docs/`, where the UI's relative asset paths resolve.
async fn docs_redirect() -> actix_web::HttpResponse {
    actix_web::HttpResponse::PermanentRedirect()
        .insert_header(("Location", "/docs/"))
        .finish()
}

/// Binds a TCP listener on `addr` (use port 0 in tests).
pub fn bind(addr: &str) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr)
}
