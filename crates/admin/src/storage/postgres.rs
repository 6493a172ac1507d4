//! The administration service's statements compiled for PostgreSQL.

type Db = sqlx::Postgres;

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
