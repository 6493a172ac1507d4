//! The analysts' web console, served under `/console/` by the analytics service (and `speechd serve`):
//! sign-in through the token service as a backend-for-frontend (`signin`, `sessions`), and pages built on
//! the analytics API called with the signed-in user's token (`api`), so the console shows exactly what
//! that token may see. Every asset is compiled in (`routes::assets`); pages are HTML from the server,
//! with a little script for the charts and for checking phrases as they are typed (docs/console.md).

pub mod api;
pub mod appstats;
pub mod client;
pub mod error;
pub mod offload;
pub mod pages;
pub mod routes;
pub mod seal;
pub mod sessions;
pub mod settings;
pub mod signin;
pub mod state;

use common::db::Migrations;

pub use routes::configure;
pub use settings::ConsoleSettings;
pub use state::Console;

/// The console's table (versions 7001 to 7999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};
