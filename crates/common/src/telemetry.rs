//! Telemetry: logs as JSON lines by default (one object per event, for log shippers) or readable text
//! with `SPEECH_LOG_FORMAT=text`, at the level of `RUST_LOG` (default `info`); and, when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set, traces exported over OTLP/HTTP with W3C trace context taken from
//! incoming `traceparent` headers, so one trace follows a request across services.

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

static TRACING: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported; request spans are only created then, so they cost nothing otherwise.
pub fn traces_exported() -> bool {
    TRACING.load(Ordering::Relaxed)
}

/// Keeps the trace exporter alive; dropping it flushes the spans still buffered.
#[must_use = "dropping the guard stops trace export"]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl TelemetryGuard {
    /// Sends the buffered spans now.
    pub fn flush(&self) {
        if let Some(provider) = &self.provider {
            let _ = provider.force_flush();
        }
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Installs logging (and trace export when configured) for `service`. Later calls in the same process
/// (several services in `speechd`, tests) keep the first installation.
pub fn init(service: &str, log_format: &str) -> TelemetryGuard {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|e| !e.trim().is_empty());
    init_with(service, log_format, endpoint.as_deref())
}

pub fn init_with(service: &str, log_format: &str, otlp_endpoint: Option<&str>) -> TelemetryGuard {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let logs = if log_format.eq_ignore_ascii_case("text") {
        fmt::layer().with_target(false).boxed()
    } else {
        fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .boxed()
    };
    let (provider, traces) = match otlp_endpoint.map(|e| exporter(service, e)) {
        Some(Ok(provider)) => {
            let tracer = provider.tracer(service.to_string());
            (
                Some(provider),
                Some(tracing_opentelemetry::layer().with_tracer(tracer)),
            )
        }
        Some(Err(e)) => {
            eprintln!("OTLP trace export disabled: {e}");
            (None, None)
        }
        None => (None, None),
    };
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(logs)
        .with(traces)
        .try_init()
        .is_ok();
    if installed && provider.is_some() {
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        TRACING.store(true, Ordering::Relaxed);
    }
    TelemetryGuard {
        provider: if installed { provider } else { None },
    }
}

fn exporter(service: &str, endpoint: &str) -> Result<SdkTracerProvider, String> {
    use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
    let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(url)
        .with_headers(Default::default())
        .build()
        .map_err(|e| e.to_string())?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service.to_string())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// The W3C `traceparent` of the current span, for a bus message to carry (`None` when traces are not
/// exported or no span is open).
pub fn current_traceparent() -> Option<String> {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if !traces_exported() {
        return None;
    }
    let context = tracing::Span::current().context();
    let mut carrier = std::collections::HashMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&context, &mut carrier));
    carrier.remove("traceparent")
}

/// A span for a worker's job that continues the trace of the message's `traceparent`, so one trace runs
/// from the HTTP request through the bus into the worker.
pub fn job_span(topic: &str, traceparent: Option<&str>) -> tracing::Span {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let span =
        tracing::info_span!("bus job", otel.kind = "consumer", messaging.destination = %topic);
    if let Some(traceparent) = traceparent {
        let carrier: std::collections::HashMap<String, String> =
            [("traceparent".to_string(), traceparent.to_string())].into();
        let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&carrier));
        let _ = span.set_parent(parent);
    }
    span
}
