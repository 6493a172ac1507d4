//! Prometheus metrics of one service: a registry of its own (several services may share a process) with
//! request counts and latencies by route pattern, never by raw path, so cardinality stays bounded.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use tracing::Instrument;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

/// A sampled gauge's series: the values of its labels, in order, and the value.
pub type Series = Vec<(Vec<String>, i64)>;

type Sampler = dyn Fn() -> Pin<Box<dyn Future<Output = Series> + Send>> + Send + Sync;

/// A gauge read afresh at every scrape (a count another system holds, such as a queue's dead letters),
/// by its labels.
#[derive(Clone)]
struct Sampled {
    gauge: IntGaugeVec,
    sample: Arc<Sampler>,
}

#[derive(Clone)]
pub struct HttpMetrics {
    pub registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    sampled: Vec<Sampled>,
    /// Client connections open now.
    pub(crate) connections: IntGauge,
    /// Connections refused at the limit: `reserved` (a request other than the operational endpoints on
    /// a connection past `max_connections`), `closed` (past the reserve too).
    pub(crate) refused_connections: IntCounterVec,
    /// Request bodies that did not arrive in time.
    pub(crate) body_timeouts: IntCounter,
}

impl HttpMetrics {
    pub fn new(service: &str) -> HttpMetrics {
        let registry = Registry::new_custom(
            None,
            Some([("service".to_string(), service.to_string())].into()),
        )
        .expect("valid registry labels");
        let requests = IntCounterVec::new(
            Opts::new(
                "http_requests_total",
                "HTTP requests answered, by route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "Time to answer HTTP requests, by route",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
            ]),
            &["route"],
        )
        .expect("valid metric");
        let connections = IntGauge::new("http_connections_open", "Client connections open now")
            .expect("valid metric");
        let refused_connections = IntCounterVec::new(
            Opts::new(
                "http_connections_refused_total",
                "Connections refused at the connection limit: reserved (for the operational endpoints \
                 only) or closed (past the reserve too)",
            ),
            &["reason"],
        )
        .expect("valid metric");
        let body_timeouts = IntCounter::new(
            "http_body_timeouts_total",
            "Request bodies that did not arrive in time",
        )
        .expect("valid metric");
        registry
            .register(Box::new(requests.clone()))
            .expect("register once");
        registry
            .register(Box::new(latency.clone()))
            .expect("register once");
        for metric in [
            Box::new(connections.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(refused_connections.clone()),
            Box::new(body_timeouts.clone()),
        ] {
            registry.register(metric).expect("register once");
        }
        HttpMetrics {
            registry,
            requests,
            latency,
            connections,
            refused_connections,
            body_timeouts,
            sampled: Vec::new(),
        }
    }

    /// Adds the gauge `name`, one series per values of `labels`, set from what `sample` answers at every
    /// scrape; a series it no longer answers is dropped.
    pub fn with_sampled_gauge<F, Fut>(
        mut self,
        name: &str,
        help: &str,
        labels: &[&str],
        sample: F,
    ) -> HttpMetrics
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Series> + Send + 'static,
    {
        let gauge = IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
        self.registry
            .register(Box::new(gauge.clone()))
            .expect("register once");
        self.sampled.push(Sampled {
            gauge,
            sample: Arc::new(move || Box::pin(sample())),
        });
        self
    }

    /// Reads every sampled gauge afresh.
    pub async fn sample(&self) {
        for sampled in &self.sampled {
            let values = (sampled.sample)().await;
            sampled.gauge.reset();
            for (labels, value) in values {
                let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                if let Ok(series) = sampled.gauge.get_metric_with_label_values(&labels) {
                    series.set(value);
                }
            }
        }
    }

    /// The text exposition format of every metric in the registry.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("text encoding cannot fail");
        String::from_utf8(out).expect("exposition format is UTF-8")
    }
}

/// Middleware: counts and times every request and, when traces are exported, wraps it in a server span
/// that continues the caller's trace (W3C `traceparent`).
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let metrics = req.app_data::<web::Data<HttpMetrics>>().cloned();
    let method = req.method().clone();
    let span = crate::telemetry::traces_exported().then(|| request_span(&req));
    let response = match &span {
        Some(span) => next.call(req).instrument(span.clone()).await?,
        None => next.call(req).await?,
    };
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_string());
    let status = response.status();
    if let Some(span) = span {
        span.record("http.route", route.as_str());
        span.record("http.response.status_code", status.as_u16());
    }
    if let Some(metrics) = metrics {
        metrics
            .requests
            .with_label_values(&[method.as_str(), &route, status.as_str()])
            .inc();
        metrics
            .latency
            .with_label_values(&[&route])
            .observe(started.elapsed().as_secs_f64());
    }
    Ok(response)
}

fn request_span(req: &ServiceRequest) -> tracing::Span {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let span = tracing::info_span!(
        "HTTP request",
        otel.kind = "server",
        http.request.method = %req.method(),
        url.path = %req.path(),
        http.route = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
    );
    let parent = opentelemetry::global::get_text_map_propagator(|p| {
        p.extract(&HeaderExtractor(req.headers()))
    });
    let _ = span.set_parent(parent);
    span
}

/// Reads W3C trace context from actix request headers.
struct HeaderExtractor<'a>(&'a actix_web::http::header::HeaderMap);

impl opentelemetry::propagation::Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}
