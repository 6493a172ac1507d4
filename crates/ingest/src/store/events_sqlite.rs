//! Events on SQLite (the embedded store): a group of batches lands in one transaction, insert ids claimed
//! row by row, events written with multi-row `INSERT`s.

use std::fmt::Write as _;

use common::db::StoreError;
use sqlx::{Row, SqliteConnection};

use super::events_query::{self, EventQuery, Fresh};
use crate::model::{NewEvent, StoredEvent};

/// Rows per `INSERT`: 16 values each, well under SQLite's limit of bound values per statement.
const ROWS_PER_INSERT: usize = 200;

/// The keys of `keys` whose project does not exist.
pub async fn missing_projects(
    c: &mut SqliteConnection,
    keys: &[&str],
) -> Result<std::collections::HashSet<String>, StoreError> {
    let mut missing = std::collections::HashSet::new();
    for key in keys {
        let found = sqlx::query("SELECT 1 FROM ingest_projects WHERE app_key = $1")
            .bind(*key)
            .fetch_optional(&mut *c)
            .await?;
        if found.is_none() {
            missing.insert(key.to_string());
        }
    }
    Ok(missing)
}

/// Rows one statement of [`delete_before`] removes at most: each holds the write lock about as long as
/// a write of a few batches.
const ROWS_PER_DELETE: i64 = 5_000;

/// Deletes the events before `cutoff_ms`, project by project (each reached through the index on app key
/// and time) and a few thousand rows per statement, each statement its own transaction taken in its
/// turn at the process's write gate, so writes of events go in between; how many.
pub async fn delete_before(
    db: &common::db::Database,
    pool: &sqlx::SqlitePool,
    cutoff_ms: i64,
) -> Result<u64, StoreError> {
    let keys: Vec<String> = sqlx::query_scalar("SELECT app_key FROM ingest_projects")
        .fetch_all(pool)
        .await?;
    let mut deleted = 0;
    for key in keys {
        loop {
            let _turn = db.write_turn().await?;
            let done = sqlx::query(
                "DELETE FROM ingest_events WHERE rowid IN (SELECT rowid FROM ingest_events \
                 WHERE app_key = $1 AND event_time < $2 LIMIT $3)",
            )
            .bind(&key)
            .bind(cutoff_ms)
            .bind(ROWS_PER_DELETE)
            .execute(pool)
            .await?
            .rows_affected();
            deleted += done;
            if done < ROWS_PER_DELETE as u64 {
                break;
            }
        }
    }
    Ok(deleted)
}

pub async fn insert(
    c: &mut SqliteConnection,
    events: &[&NewEvent],
    window_start_ms: i64,
    now_ms: i64,
) -> Result<Fresh, StoreError> {
    let mut fresh = events_query::claim_in_memory(events);
    for (i, event) in events.iter().enumerate() {
        let Some(id) = event.insert_id.as_deref().filter(|_| fresh[i]) else {
            continue;
        };
        let claimed = sqlx::query(
            "INSERT INTO ingest_insert_ids (app_key, insert_id, seen_at) VALUES ($1, $2, $3) \
             ON CONFLICT (app_key, insert_id) DO UPDATE SET seen_at = excluded.seen_at \
             WHERE ingest_insert_ids.seen_at < $4 RETURNING 1",
        )
        .bind(&event.app_key)
        .bind(id)
        .bind(now_ms)
        .bind(window_start_ms)
        .fetch_optional(&mut *c)
        .await?;
        fresh[i] = claimed.is_some();
    }
    let rows: Vec<&NewEvent> = events
        .iter()
        .zip(&fresh)
        .filter(|(_, fresh)| **fresh)
        .map(|(e, _)| *e)
        .collect();
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut sql = String::from(
            "INSERT INTO ingest_events (app_key, event_time, event_name, user_id, received_at, insert_id, \
             session_dua, ip, browser, browser_version, os, device_type, city, state, country, properties) VALUES ",
        );
        for row in 0..chunk.len() {
            sql.push_str(if row == 0 { "(" } else { ", (" });
            for column in 0..16 {
                let _ = write!(
                    sql,
                    "{}${}",
                    if column == 0 { "" } else { ", " },
                    row * 16 + column + 1
                );
            }
            sql.push(')');
        }
        let mut query = sqlx::query(&sql);
        for e in chunk {
            query = query
                .bind(&e.app_key)
                .bind(e.time_ms)
                .bind(&e.event_name)
                .bind(&e.user_id)
                .bind(e.received_ms)
                .bind(&e.insert_id)
                .bind(&e.session_dua)
                .bind(&e.ip)
                .bind(&e.browser)
                .bind(&e.browser_version)
                .bind(&e.os)
                .bind(&e.device_type)
                .bind(&e.city)
                .bind(&e.state)
                .bind(&e.country)
                .bind(&e.properties);
        }
        query.execute(&mut *c).await?;
    }
    Ok(fresh)
}

pub async fn read(
    c: &mut SqliteConnection,
    q: &EventQuery<'_>,
) -> Result<Vec<StoredEvent>, StoreError> {
    let sql = events_query::page_sql("$4");
    let rows = sqlx::query(&sql)
        .bind(q.app_key)
        .bind(q.from_ms)
        .bind(q.to_ms)
        .bind(q.event_name)
        .bind(q.after.0)
        .bind(q.after.1)
        .bind(q.limit)
        .fetch_all(&mut *c)
        .await?;
    rows.into_iter()
        .map(|row| {
            events_query::stored(
                &row,
                row.try_get("seq")?,
                row.try_get("event_time")?,
                row.try_get("received_at")?,
            )
        })
        .collect()
}
