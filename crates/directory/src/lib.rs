//! The directory: companies (tenants), users with their roles, roles with their permissions, and OAuth
//! clients. This crate alone reads and writes those tables; the administration API changes profiles,
//! roles and clients through it, and the token service reads them and records login facts through it.
//! Every function runs on the pool (`&db`) or inside a caller's transaction (`&mut tx`); those that write
//! more than one row take a transaction, so they can never be left half done.

mod model;
mod provision;
mod store;

use common::db::Migrations;

pub use model::*;
pub use provision::{new_client, new_company, new_role, ClientSpec};
pub use store::*;

/// The directory's tables (versions 0001 to 0999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};
