//! The core of the transcript analytics API: configuration of companies, organizations and folders,
//! calls added to folders, their metadata and search, applications with their scores, and the daily
//! statistics, with the bus workers that keep the search index and the scores up to date and carry out
//! deletions (docs/analytics-api.md). Its tables are the `analytics-store` crate's, its rules the
//! `scoring` crate's; it reaches the object store, the search index and the bus through the ports of
//! `common`, whose adapters `ports` picks from the configuration. Transcription is a crate of its own on
//! this one; the `analytics` crate serves both as one service.

pub mod access;
pub mod admission;
pub mod apps;
pub mod calls;
pub mod config;
pub mod error;
pub mod group_commit;
pub mod jobs;
pub mod metadata;
pub mod orphans;
pub mod outbox;
pub mod ports;
pub mod provision;
pub mod routes;
pub mod scopes;
pub mod state;
pub mod topics;
pub mod worker;

pub use config::AnalyticsConfig;
pub use state::{AnalyticsState, Ports};
