//! The analytics statements compiled for PostgreSQL.

mod dialect;

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;

#[allow(clippy::duplicate_mod)]
#[path = "scoring_sql.rs"]
mod scoring_sql;
pub(super) use scoring_sql::*;

#[allow(clippy::duplicate_mod)]
#[path = "apps_sql.rs"]
mod apps_sql;
pub(super) use apps_sql::*;

#[allow(clippy::duplicate_mod)]
#[path = "stats_sql.rs"]
mod stats_sql;
pub(super) use stats_sql::*;

#[allow(clippy::duplicate_mod)]
#[path = "requests_sql.rs"]
mod requests_sql;
pub(super) use requests_sql::*;

#[allow(clippy::duplicate_mod)]
#[path = "callback_secrets_sql.rs"]
mod callback_secrets_sql;
pub(super) use callback_secrets_sql::*;

#[allow(clippy::duplicate_mod)]
#[path = "metadata_sql.rs"]
mod metadata_sql;
pub(super) use metadata_sql::*;
