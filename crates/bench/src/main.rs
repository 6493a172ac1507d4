//! `bare-actix`: the baseline of the benchmarks, a bare actix-web handler answering a small JSON body, built
//! with the same profile and worker count as the services, so `scripts/bench` can report each service's
//! throughput as a ratio of what the framework alone serves on this machine.

use actix_web::{web, App, HttpResponse, HttpServer};

/// Reads the request body, as every real handler does (an unread body costs actix the connection).
async fn handler(_body: web::Bytes) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(r#"{"access_token":"x","token_type":"Bearer","expires_in":3600}"#)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18080".to_string());
    HttpServer::new(|| App::new().default_service(web::to(handler)))
        .backlog(4096)
        .bind(addr)?
        .run()
        .await
}
