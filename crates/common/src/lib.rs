//! Everything the four services share: configuration loading, the error model, telemetry, the HTTP
//! scaffolding (health, metrics, OpenAPI, graceful shutdown), the JWT verifier, the secrets helpers and the
//! relational-store port with its transactions. Domain tables live in the crates that own them.

pub mod bus;
pub mod cache;
pub mod config;
pub mod db;
pub mod error;
pub mod halves;
pub mod http;
pub mod jwt;
pub mod object_only;
pub mod objects;
pub mod private_files;
pub mod search;
pub mod secrets;
pub mod service;
pub mod telemetry;
pub mod time;
pub mod whole;

#[cfg(feature = "testing")]
pub mod testing;

pub use error::{ApiError, ErrorCode};
