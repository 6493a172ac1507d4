//! Integration tests of the token service: real HTTP on loopback, every test on PostgreSQL and SQLite.

mod authorize_rules;
mod browser;
mod client_credentials;
mod code_flow;
mod code_replay_race;
mod hardening;
mod housekeeping;
mod introspection;
mod keys;
mod lockout_race;
mod login;
mod login_csrf;
mod logout;
mod openapi;
mod pkce;
mod refresh;
mod refresh_race;
mod relying_party;
mod support;
mod verifier;
mod verifier_bounds;
mod verifier_proxy;
