//! What the statements of `*_sql.rs` need to know of PostgreSQL: the database type they compile for and
//! the few words of SQL that differ.

pub(super) type Db = sqlx::Postgres;
/// Locks the rows a read returns until the transaction ends.
pub(super) const FOR_UPDATE: &str = " FOR UPDATE";
