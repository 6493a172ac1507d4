//! The directory's statements compiled for PostgreSQL.

type Db = sqlx::Postgres;
/// Joins the role names of a user in one string.
const STRING_AGG: &str = "string_agg";

/// Serializes, within the transaction, the creations of usernames equal but for case (one lock per
/// company and lower-case name), so two of them cannot both pass the check before the insert.
const NAME_LOCK: Option<&str> = Some("SELECT pg_advisory_xact_lock(hashtext($1))");

#[allow(clippy::duplicate_mod)]
#[path = "sql.rs"]
mod sql;
pub(super) use sql::*;
