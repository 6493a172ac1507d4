//! The directory's statements compiled for SQLite.

type Db = sqlx::Sqlite;
/// Joins the role names of a user in one string.
const STRING_AGG: &str = "group_concat";

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
