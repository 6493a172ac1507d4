//! The revocation list's statements compiled for SQLite.

type Db = sqlx::Sqlite;

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
