//! The project statements compiled for PostgreSQL, and the event statements written for it alone.

type Db = sqlx::Postgres;
/// How `ingest_insert_ids.seen_at` is bound.
type Seen = chrono::DateTime<chrono::Utc>;

#[allow(clippy::duplicate_mod)]
#[path = "projects_sql.rs"]
mod projects_sql;
pub(super) use projects_sql::*;

/// A page of events, for `dispatch!`.
pub(super) use super::events_pg::read as read_events;
