//! HTTP scaffolding every service shares: the server builder (`serve`), the operational endpoints
//! (`/healthz`, `/readyz`, `/metrics`, `/openapi.json` and its docs UI at `/docs/`) and their part of the
//! OpenAPI document, request metrics, JSON extractor errors in the
//! platform's error format, a JSON body extractor that refuses repeated keys, the limits every server keeps
//! (connections, with a reserve for the operational endpoints; a deadline on request bodies; the process's
//! open files), what a service answers while it waits for its dependencies, and signal handling for
//! graceful shutdown.

mod body_deadline;
mod connections;
mod extract;
pub mod fd_limit;
pub(crate) mod limits;
mod methods;
mod metrics;
mod openapi;
mod ops;
mod server;
mod shutdown;
mod starting;
mod strict_json;

pub use extract::{form_config, json_config, path_config, query_config};
pub use limits::{api_error_answer, ErrorAnswer, HttpLimits};
pub use metrics::{HttpMetrics, Series};
pub use openapi::{
    add_common_responses, add_security_schemes, basic_scheme, bearer_scheme, describe_path_names,
    query_token_scheme, with_keyword, with_operational_endpoints, PathName,
};
pub use ops::Readiness;
pub use server::{bind, serve, ServerSpec};
pub use shutdown::{run_until_signal, wait_for_signal};
pub use starting::{serve_starting, Starting};
pub use strict_json::{check_json, is_json_object, StrictJson, MAX_JSON_BODY};
