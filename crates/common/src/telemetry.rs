//! Logging: JSON lines by default (one object per event, for log shippers), human-readable text with
//! `SPEECH_LOG_FORMAT=text`. The level comes from `RUST_LOG` (default `info`).

use tracing_subscriber::{fmt, EnvFilter};

/// Installs the global subscriber once; later calls (tests, several services in one process) are no-ops.
pub fn init(format: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let result = if format.eq_ignore_ascii_case("text") {
        fmt().with_env_filter(filter).with_target(false).try_init()
    } else {
        fmt()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_env_filter(filter)
            .try_init()
    };
    let _ = result;
}
