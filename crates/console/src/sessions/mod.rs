//! The console's sign-in sessions, its one table. A session is found by the hash of the random id its
//! cookie holds; it ends when its access token expires, or at sign-out, when its row goes (a copy of the
//! cookie then opens nothing). Expired rows are removed as new sessions start.

mod sql;

use common::db::{Database, Handle, StoreError};
use common::dispatch;
use sql::Statements;

/// A session as stored; `access_token` is sealed (`crate::seal`).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRow {
    pub id_hash: String,
    pub company: String,
    pub username: String,
    pub access_token: String,
    pub csrf: String,
    pub expires_ms: i64,
}

/// Stores a new session, and removes those expired before `now_ms`.
pub async fn insert(db: &Database, row: &SessionRow, now_ms: i64) -> Result<(), StoreError> {
    dispatch!(db, Statements::purge(now_ms))?;
    dispatch!(db, Statements::insert(row))
}

/// The session whose id hashes to `id_hash`, unless it expired before `now_ms`.
pub async fn find<'a>(
    h: impl Into<Handle<'a>>,
    id_hash: &str,
    now_ms: i64,
) -> Result<Option<SessionRow>, StoreError> {
    dispatch!(h, Statements::find(id_hash, now_ms))
}

/// Ends the session whose id hashes to `id_hash`.
pub async fn delete<'a>(h: impl Into<Handle<'a>>, id_hash: &str) -> Result<(), StoreError> {
    dispatch!(h, Statements::delete(id_hash))
}
