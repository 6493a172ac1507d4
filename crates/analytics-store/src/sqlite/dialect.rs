//! What the statements of `*_sql.rs` need to know of SQLite: the database type they compile for and
//! the few words of SQL that differ.

pub(super) type Db = sqlx::Sqlite;
/// Nothing to add: a SQLite transaction holds the database's write lock from its start (`BEGIN
/// IMMEDIATE`), which already serializes every writer.
pub(super) const FOR_UPDATE: &str = "";
