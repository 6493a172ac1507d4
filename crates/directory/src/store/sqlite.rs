//! The directory's statements compiled for SQLite.

type Db = sqlx::Sqlite;
/// Joins the role names of a user in one string.
const STRING_AGG: &str = "group_concat";

/// None needed: SQLite runs one writing transaction at a time, so the check before the insert and the
/// insert cannot interleave with another creation's.
const NAME_LOCK: Option<&str> = None;

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
