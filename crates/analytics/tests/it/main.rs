//! Integration tests of the analytics service: a real token service and the analytics service on one
//! test database, real HTTP on loopback, the embedded adapters under a fresh directory, every test on
//! PostgreSQL and SQLite.

mod calls;
mod config;
mod deletion;
mod metadata;
mod production;
mod search;
mod support;
mod tenancy;
