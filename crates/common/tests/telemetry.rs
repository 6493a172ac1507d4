//! Trace export: a request served by `common::http::serve` becomes a server span exported over OTLP/HTTP
//! to a collector (here a loopback HTTP server standing in for the OpenTelemetry collector), continuing
//! the trace named by the caller's `traceparent`, which a bus message then carries into a worker's span.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::testing::loopback_listener;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_spans_are_exported_with_the_callers_trace_id() {
    let received: Arc<Mutex<Vec<web::Bytes>>> = Arc::default();
    let sink = received.clone();
    let (collector_listener, collector_url) = loopback_listener();
    let collector = HttpServer::new(move || {
        let sink = sink.clone();
        App::new().route(
            "/v1/traces",
            web::post().to(move |body: web::Bytes| {
                let sink = sink.clone();
                async move {
                    sink.lock().unwrap().push(body);
                    HttpResponse::Ok().finish()
                }
            }),
        )
    })
    .workers(1)
    .listen(collector_listener)
    .unwrap()
    .run();
    tokio::spawn(collector);

    let guard = common::telemetry::init_with("trace-test", "json", Some(&collector_url));
    assert!(common::telemetry::traces_exported());

    let (listener, url) = loopback_listener();
    let spec = ServerSpec {
        name: "trace-test",
        openapi: utoipa::openapi::OpenApiBuilder::new().build(),
        readiness: Readiness::new(|| async { vec![] }),
        metrics: HttpMetrics::new("trace-test"),
        workers: 1,
        limits: Default::default(),
        answer: common::http::api_error_answer,
    };
    // What a handler would put on a bus message it publishes.
    let published: Arc<Mutex<Option<String>>> = Arc::default();
    let outbox = published.clone();
    let server = serve(spec, listener, move |cfg| {
        let outbox = outbox.clone();
        cfg.route(
            "/hello/{name}",
            web::get().to(move || {
                let outbox = outbox.clone();
                async move {
                    *outbox.lock().unwrap() = common::telemetry::current_traceparent();
                    HttpResponse::Ok().body("hi")
                }
            }),
        );
    })
    .unwrap();
    tokio::spawn(server);

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let response = reqwest::Client::new()
        .get(format!("{url}/hello/world"))
        .header("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-01"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let traceparent = published
        .lock()
        .unwrap()
        .clone()
        .expect("a traceparent for the bus");
    assert!(traceparent.contains(trace_id), "{traceparent}");
    // A worker's job continues the same trace.
    drop(common::telemetry::job_span("jobs", Some(&traceparent)).entered());

    let guard = tokio::task::spawn_blocking(move || {
        guard.flush();
        guard
    })
    .await
    .unwrap();
    let mut exported = Vec::new();
    for _ in 0..50 {
        exported = received
            .lock()
            .unwrap()
            .iter()
            .flat_map(|b| b.to_vec())
            .collect::<Vec<u8>>();
        if !exported.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(guard);
    assert!(!exported.is_empty(), "the collector received no spans");
    let contains = |needle: &[u8]| exported.windows(needle.len()).any(|w| w == needle);
    assert!(contains(b"HTTP request"), "a server span per request");
    assert!(contains(b"bus job"), "the job's span is exported too");
    assert!(
        contains(b"/hello/{name}"),
        "the span carries the route pattern"
    );
    assert!(
        contains(&hex(trace_id)),
        "span continues the caller's trace"
    );
    assert!(contains(b"trace-test"), "resource names the service");
}
