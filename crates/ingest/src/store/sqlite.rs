//! The project statements compiled for SQLite, and the event statements written for it alone.

type Db = sqlx::Sqlite;
/// How `ingest_insert_ids.seen_at` is bound.
type Seen = i64;

#[allow(clippy::duplicate_mod)]
#[path = "projects_sql.rs"]
mod projects_sql;
pub(super) use projects_sql::*;

/// A page of events, for `dispatch!`.
pub(super) use super::events_sqlite::read as read_events;
