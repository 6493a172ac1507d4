//! The analytics statements compiled for PostgreSQL.

type Db = sqlx::Postgres;
/// Locks the rows a read returns until the transaction ends.
const FOR_UPDATE: &str = " FOR UPDATE";

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
