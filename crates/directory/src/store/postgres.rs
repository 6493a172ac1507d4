//! The directory's statements compiled for PostgreSQL.

type Db = sqlx::Postgres;
/// Joins the role names of a user in one string.
const STRING_AGG: &str = "string_agg";

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
