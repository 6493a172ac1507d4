//! The bus queue's statements compiled for SQLite.

type Db = sqlx::Sqlite;
/// SQLite has one writer at a time: the lease update is atomic without row locks.
const LOCK_READY: &str = "";

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
