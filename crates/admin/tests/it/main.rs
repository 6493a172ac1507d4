//! Integration tests of the administration service: a real token service and the admin service on one
//! test database, real HTTP on loopback, every test on PostgreSQL and SQLite.

mod access;
mod audit;
mod clients;
mod hostile_input;
mod kill_during_writes;
mod limits;
mod openapi;
mod privileges;
mod read_cache;
mod roles;
mod schemas;
mod support;
mod token_revocation;
mod typed_bodies;
mod users;
