//! The ingestion service's integration tests: one binary, a module per endpoint, every test on
//! PostgreSQL and on SQLite against a real token service over loopback HTTP.

mod support;

mod bombs;
mod events;
mod fault;
mod methods;
mod projects;
mod retention;
mod sink;
mod slow_bodies;
mod track;
mod write_gate;
