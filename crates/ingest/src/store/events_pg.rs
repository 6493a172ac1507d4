//! Events on PostgreSQL: a group of batches lands in one transaction, its rows sent with one binary `COPY`
//! into the table partitioned by month, after the insert ids it carries are claimed. Each month's
//! partition is created before the first write into it: this month's and the next ahead of time
//! ([`Partitions::prepare`]), any other when an event of it comes.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Datelike, Utc};
use common::db::StoreError;
use parking_lot::Mutex;
use sqlx::{Connection, Executor, PgConnection, PgPool, Row};

use super::events_query::{self, EventQuery, Fresh};
use crate::model::{NewEvent, StoredEvent};

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01), for binary timestamps.
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// The statement every write of events runs on PostgreSQL, with `copy_data` as its input.
pub const COPY: &str =
    "COPY ingest_events (app_key, event_time, event_name, user_id, received_at, insert_id, \
     session_dua, ip, browser, browser_version, os, device_type, city, state, country, properties) \
     FROM STDIN (FORMAT binary)";

/// The months whose partitions this process knows to exist.
#[derive(Default)]
pub struct Partitions {
    known: Mutex<HashSet<i32>>,
}

impl Partitions {
    /// Creates the partitions of the months of `times` that this process has not seen yet. A month
    /// whose partition is already attached (another replica's, or this one's before a restart) is only
    /// noted: creating one waits for the advisory lock that serializes creation across processes (so
    /// two replicas never race on one month), which a detach under way holds for up to `LOCK_WAIT`.
    pub async fn ensure(
        &self,
        pool: &PgPool,
        times: impl Iterator<Item = i64>,
    ) -> Result<(), StoreError> {
        let mut missing: BTreeSet<i32> = {
            let known = self.known.lock();
            times.map(month_of).filter(|m| !known.contains(m)).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = missing.iter().map(|m| partition_name(*m)).collect();
        // A partition whose detach has begun (PostgreSQL 14 and later) takes no rows: it is not
        // attached. The column is read through `to_jsonb` because older servers lack it.
        let attached: Vec<String> = sqlx::query_scalar(
            "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhparent = 'ingest_events'::regclass AND c.relname::text = ANY($1) \
             AND NOT coalesce((to_jsonb(i) ->> 'inhdetachpending')::boolean, false)",
        )
        .bind(&names)
        .fetch_all(pool)
        .await?;
        let attached: Vec<i32> = attached
            .iter()
            .filter_map(|name| name_month(name))
            .collect();
        missing.retain(|m| !attached.contains(m));
        self.known.lock().extend(attached);
        if missing.is_empty() {
            return Ok(());
        }
        let mut tx = pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(6001)")
            .execute(&mut *tx)
            .await?;
        for month in &missing {
            let (from, to) = month_range(*month).expect("the month of an instant");
            sqlx::query(&format!(
                "CREATE TABLE IF NOT EXISTS {} PARTITION OF ingest_events \
                 FOR VALUES FROM ('{}') TO ('{}')",
                partition_name(*month),
                from.to_rfc3339(),
                to.to_rfc3339()
            ))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.known.lock().extend(missing);
        Ok(())
    }

    /// Creates the partitions of the month of `now_ms` and of the next one, if they are missing, so that
    /// the first events of a month find theirs there: the service does so every hour.
    pub async fn prepare(&self, pool: &PgPool, now_ms: i64) -> Result<(), StoreError> {
        let (_, next) = month_range(month_of(now_ms)).expect("the month of an instant");
        self.ensure(pool, [now_ms, next.timestamp_millis()].into_iter())
            .await
    }

    /// Drops the partitions of the months that end by `cutoff_ms`; how many. Under the lock partitions
    /// are created under, so a replica never drops a month another is creating.
    ///
    /// On PostgreSQL 14 and later each partition is first detached `CONCURRENTLY`, which never stops
    /// the table's reads and writes: it waits for those already reading the partition, while new ones
    /// go on without it. Only then is the detached table dropped, which no one else reads any more. A
    /// detach cut short (by `LOCK_WAIT`, or a restart) leaves its partition pending, and the next
    /// round finishes it. Older servers drop the partition at once, which needs the whole table to
    /// itself and so holds back its reads and writes for up to `LOCK_WAIT_OLD`.
    pub async fn drop_before(&self, pool: &PgPool, cutoff_ms: i64) -> Result<u64, StoreError> {
        // A connection of its own, closed at the end, so that its session lock (a concurrent detach
        // cannot run inside a transaction) never goes back to the pool, even after an error.
        let mut conn = pool.acquire().await?.detach();
        let dropped = drop_old_partitions(&mut conn, cutoff_ms).await;
        // Closing ends the session and so releases its lock; it is already gone if the server went away.
        let _ = conn.close().await;
        let dropped = dropped?;
        let mut known = self.known.lock();
        for month in &dropped {
            known.remove(month);
        }
        Ok(dropped.len() as u64)
    }
}

/// How long a detach waits for a lock, or for the reads and writes already using its partition, before
/// it gives up until the next round; it holds back no read or write meanwhile.
const LOCK_WAIT: &str = "5s";
/// How long a drop on a server older than PostgreSQL 14 waits for the table, holding back its reads and
/// writes meanwhile.
const LOCK_WAIT_OLD: &str = "1s";

/// [`Partitions::drop_before`] on its own connection: the months dropped.
async fn drop_old_partitions(
    conn: &mut PgConnection,
    cutoff_ms: i64,
) -> Result<Vec<i32>, StoreError> {
    let concurrent: bool =
        sqlx::query_scalar("SELECT current_setting('server_version_num')::int >= 140000")
            .fetch_one(&mut *conn)
            .await?;
    let wait = if concurrent { LOCK_WAIT } else { LOCK_WAIT_OLD };
    // The lock limit bounds the waits in the table's lock queue (where a drop on an older server holds
    // back those behind it); the statement limit bounds the rest, above all a detach's wait for the reads
    // already using its partition, to which the lock limit does not apply. Meanwhile a new month's
    // partition waits to be created, since creating one and detaching one both take the table's
    // partition lock.
    for setting in [
        format!("SET lock_timeout = '{wait}'"),
        format!("SET statement_timeout = '{LOCK_WAIT}'"),
    ] {
        sqlx::query(&setting).execute(&mut *conn).await?;
    }
    sqlx::query("SELECT pg_advisory_lock(6001)")
        .execute(&mut *conn)
        .await?;
    // Each partition's name, the name that reaches it whatever the search path (with its schema when
    // another schema's table would be found first), and whether a detach of it was cut short.
    let pending = if concurrent {
        "i.inhdetachpending"
    } else {
        "false"
    };
    let names: Vec<(String, String, bool)> = sqlx::query_as(&format!(
        "SELECT c.relname::text, c.oid::regclass::text, {pending} FROM pg_inherits i \
         JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'ingest_events'::regclass"
    ))
    .fetch_all(&mut *conn)
    .await?;
    let parent: String = sqlx::query_scalar("SELECT 'ingest_events'::regclass::text")
        .fetch_one(&mut *conn)
        .await?;
    let mut dropped = Vec::new();
    for (name, qualified, pending) in names {
        // Only the service's own partitions, by their name: a month whose end is past the cutoff, or a
        // table an operator attached by hand, is left alone.
        let Some(month) = name_month(&name) else {
            continue;
        };
        if month_range(month).is_none_or(|(_, end)| end.timestamp_millis() > cutoff_ms) {
            continue;
        }
        if concurrent {
            let how = if pending { "FINALIZE" } else { "CONCURRENTLY" };
            // The simple protocol: a concurrent detach refuses to run in a transaction, which is what
            // the extended protocol may wrap a statement in.
            let detach = format!("ALTER TABLE {parent} DETACH PARTITION {qualified} {how}");
            conn.execute(sqlx::raw_sql(&detach)).await?;
        }
        sqlx::query(&format!("DROP TABLE {qualified}"))
            .execute(&mut *conn)
            .await?;
        dropped.push(month);
    }
    Ok(dropped)
}

/// The first instant of the month `yyyymm` and the first after it; None when it names no month (a
/// table named by hand).
fn month_range(month: i32) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let (year, m) = (month / 100, (month % 100) as u32);
    let (next_year, next) = if m == 12 {
        (year + 1, 1)
    } else {
        (year, m + 1)
    };
    let first = crate::model::month_start;
    Some((first(year, m)?, first(next_year, next)?))
}

/// The name of the partition of the month `yyyymm`.
fn partition_name(month: i32) -> String {
    format!("ingest_events_p{month}")
}

/// The month `yyyymm` of the service's partition `name`; None for any other table.
fn name_month(name: &str) -> Option<i32> {
    name.strip_prefix("ingest_events_p")
        .filter(|m| m.len() == 6)?
        .parse()
        .ok()
}

/// `yyyymm` of an instant.
fn month_of(ms: i64) -> i32 {
    let t = DateTime::from_timestamp_millis(ms).unwrap_or_default();
    t.year() * 100 + t.month() as i32
}

/// Locks the projects of `keys` against deletion until the transaction ends (a share lock, which
/// concurrent writes of the same project also take); the keys whose project does not exist.
pub async fn lock_projects(
    c: &mut PgConnection,
    keys: &[&str],
) -> Result<HashSet<String>, StoreError> {
    let found: HashSet<String> = sqlx::query_scalar::<_, String>(
        "SELECT app_key FROM ingest_projects WHERE app_key = ANY($1) ORDER BY app_key FOR KEY SHARE",
    )
    .bind(keys)
    .fetch_all(&mut *c)
    .await?
    .into_iter()
    .collect();
    Ok(keys
        .iter()
        .filter(|k| !found.contains(**k))
        .map(|k| k.to_string())
        .collect())
}

/// Claims the insert ids of `events` and copies the events that are new; `fresh[i]` says whether
/// `events[i]` was stored (false: a duplicate within the window).
pub async fn insert(
    c: &mut PgConnection,
    events: &[&NewEvent],
    window_start_ms: i64,
    now_ms: i64,
) -> Result<Fresh, StoreError> {
    let fresh = events_query::claim_in_memory(events);
    let mut fresh = fresh;
    let mut keyed: Vec<(&str, &str, usize)> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| fresh[*i])
        .filter_map(|(i, e)| e.insert_id.as_deref().map(|id| (e.app_key.as_str(), id, i)))
        .collect();
    if !keyed.is_empty() {
        // One order for every writer, so two transactions claiming overlapping ids never deadlock.
        keyed.sort_unstable();
        let keys: Vec<&str> = keyed.iter().map(|k| k.0).collect();
        let ids: Vec<&str> = keyed.iter().map(|k| k.1).collect();
        let claimed: HashSet<(String, String)> = sqlx::query(
            "INSERT INTO ingest_insert_ids (app_key, insert_id, seen_at) \
             SELECT k, i, $3 FROM UNNEST($1::text[], $2::text[]) AS t(k, i) \
             ON CONFLICT (app_key, insert_id) DO UPDATE SET seen_at = EXCLUDED.seen_at \
             WHERE ingest_insert_ids.seen_at < $4 \
             RETURNING app_key, insert_id",
        )
        .bind(&keys)
        .bind(&ids)
        .bind(timestamp(now_ms))
        .bind(timestamp(window_start_ms))
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(|row| (row.get::<String, _>(0), row.get::<String, _>(1)))
        .collect();
        for (key, id, i) in keyed {
            if !claimed.contains(&(key.to_string(), id.to_string())) {
                fresh[i] = false;
            }
        }
    }
    let kept: Vec<&NewEvent> = events
        .iter()
        .zip(&fresh)
        .filter(|(_, fresh)| **fresh)
        .map(|(e, _)| *e)
        .collect();
    let rows = kept.len();
    let data = copy_data(&kept);
    if rows > 0 {
        let mut copy = c.copy_in_raw(COPY).await?;
        copy.send(data).await?;
        copy.finish().await?;
    }
    Ok(fresh)
}

/// The binary `COPY` input of `events` (header, one tuple each, trailer).
pub fn copy_data(events: &[&NewEvent]) -> Vec<u8> {
    let mut data = Vec::with_capacity(events.len() * 256 + 32);
    data.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    data.extend_from_slice(&0i32.to_be_bytes());
    data.extend_from_slice(&0i32.to_be_bytes());
    for event in events {
        encode(&mut data, event);
    }
    data.extend_from_slice(&(-1i16).to_be_bytes());
    data
}

fn encode(out: &mut Vec<u8>, e: &NewEvent) {
    out.extend_from_slice(&16i16.to_be_bytes());
    text(out, Some(&e.app_key));
    micros(out, e.time_ms);
    text(out, Some(&e.event_name));
    text(out, Some(&e.user_id));
    micros(out, e.received_ms);
    for field in [
        &e.insert_id,
        &e.session_dua,
        &e.ip,
        &e.browser,
        &e.browser_version,
        &e.os,
        &e.device_type,
        &e.city,
        &e.state,
        &e.country,
    ] {
        text(out, field.as_deref());
    }
    text(out, Some(&e.properties));
}

fn text(out: &mut Vec<u8>, value: Option<&str>) {
    match value {
        Some(s) => {
            out.extend_from_slice(&(s.len() as i32).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
    }
}

fn micros(out: &mut Vec<u8>, ms: i64) {
    out.extend_from_slice(&8i32.to_be_bytes());
    out.extend_from_slice(&(ms * 1000 - PG_EPOCH_MICROS).to_be_bytes());
}

fn timestamp(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

pub async fn read(
    c: &mut PgConnection,
    q: &EventQuery<'_>,
) -> Result<Vec<StoredEvent>, StoreError> {
    let sql = events_query::page_sql("$4::text");
    let rows = sqlx::query(&sql)
        .bind(q.app_key)
        .bind(timestamp(q.from_ms))
        .bind(timestamp(q.to_ms))
        .bind(q.event_name)
        .bind(timestamp(q.after.0))
        .bind(q.after.1)
        .bind(q.limit)
        .fetch_all(&mut *c)
        .await?;
    rows.into_iter()
        .map(|row| {
            let time: DateTime<Utc> = row.try_get("event_time")?;
            let received: DateTime<Utc> = row.try_get("received_at")?;
            events_query::stored(
                &row,
                row.try_get("seq")?,
                time.timestamp_millis(),
                received.timestamp_millis(),
            )
        })
        .collect()
}
