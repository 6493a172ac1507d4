//! The operational endpoints of every service.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::metrics::HttpMetrics;

type Check =
    dyn Fn() -> Pin<Box<dyn Future<Output = Vec<(&'static str, bool)>> + Send>> + Send + Sync;

/// What `/readyz` checks: each dependency by name, reachable or not.
#[derive(Clone)]
pub struct Readiness(Arc<Check>);

impl Readiness {
    pub fn new<F, Fut>(check: F) -> Readiness
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<(&'static str, bool)>> + Send + 'static,
    {
        Readiness(Arc::new(move || Box::pin(check())))
    }

    /// Ready when the database answers.
    pub fn database(db: crate::db::Database) -> Readiness {
        Readiness::new(move || {
            let db = db.clone();
            async move { vec![("database", db.ping().await)] }
        })
    }
}

/// The OpenAPI document a service serves, serialized once at start.
#[derive(Clone)]
pub struct OpenApiDocument(pub Arc<String>);

#[utoipa::path(get, path = "/healthz", tag = "operations", summary = "Liveness",
    responses((status = 200, description = "Alive")))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

#[utoipa::path(get, path = "/readyz", tag = "operations", summary = "Readiness: every dependency answers",
    responses((status = 200, description = "Ready"), (status = 503, description = "A dependency is failing")))]
pub async fn readyz(readiness: web::Data<Readiness>) -> HttpResponse {
    let checks = (readiness.0)().await;
    let ready = checks.iter().all(|(_, ok)| *ok);
    let body = json!({
        "status": if ready { "ready" } else { "unavailable" },
        "checks": checks.iter().map(|(name, ok)| (name.to_string(), json!(if *ok { "ok" } else { "failing" })))
            .collect::<serde_json::Map<_, _>>(),
    });
    if ready {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

#[utoipa::path(get, path = "/metrics", tag = "operations", summary = "Prometheus metrics",
    responses((status = 200, description = "Metrics in the Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(metrics: web::Data<HttpMetrics>) -> HttpResponse {
    metrics.sample().await;
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(metrics.render())
}

#[utoipa::path(get, path = "/openapi.json", tag = "operations", summary = "This OpenAPI document",
    responses((status = 200, description = "The service's OpenAPI document", content_type = "application/json")))]
pub async fn openapi(doc: web::Data<OpenApiDocument>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(doc.0.as_str().to_string())
}
