//! Integration tests of the token service: real HTTP on loopback, every test on PostgreSQL and SQLite.

mod client_credentials;
mod support;
