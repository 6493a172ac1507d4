//! The bus queue's statements compiled for PostgreSQL.

type Db = sqlx::Postgres;
/// Concurrent consumers skip the rows another one is leasing instead of waiting for it.
const LOCK_READY: &str = "FOR UPDATE SKIP LOCKED";

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
