//! Integration tests of the analytics service: a real token service and the analytics service on one
//! test database, real HTTP on loopback. Every test runs three times (`stack_tests!`): on the embedded
//! adapters on PostgreSQL and on SQLite, and on the production adapters (PostgreSQL, RabbitMQ, an S3
//! server and a Meilisearch server started by the test).

mod app_editing;
mod appmatches;
mod apps;
mod appstats;
mod binary;
mod callback_secret;
mod callbacks;
mod calls;
mod config;
mod deletion;
mod fair_reads;
mod faults;
mod http_errors;
mod jobs;
mod kill_during_uploads;
mod matching_pool;
mod metadata;
mod metadata_stalled;
mod orphans;
mod poison;
mod reading_calls;
mod receiver;
mod scoring;
mod search;
mod start_up;
mod stats;
mod support;
mod tenancy;
mod transcription;
mod turns;
