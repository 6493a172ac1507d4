//! What the event writers and readers of both databases share: what they take and answer, the page
//! statement, the deduplication within one write and the reading of a row.

use std::collections::HashSet;

use common::db::StoreError;
use sqlx::Row;

use crate::model::{NewEvent, StoredEvent};

/// Per event of a write, whether it was stored (false: a duplicate of an insert id within the window).
pub type Fresh = Vec<bool>;

/// What a write did: per event whether it was stored, and the app keys whose project no longer exists
/// (their events were not stored: the project was deleted while they were on their way).
#[derive(Debug, Default)]
pub struct Written {
    pub fresh: Fresh,
    pub missing: HashSet<String>,
}

/// A page of a project's events: `[from_ms, to_ms)`, optionally one event name, after a cursor position
/// (event time in milliseconds and sequence number).
#[derive(Debug, Clone)]
pub struct EventQuery<'a> {
    pub app_key: &'a str,
    pub from_ms: i64,
    pub to_ms: i64,
    pub event_name: Option<&'a str>,
    pub after: (i64, i64),
    pub limit: i64,
}

/// The read of a page of events, the same on both databases but for how the optional name `$4` is
/// written (PostgreSQL cannot tell the type of a NULL parameter without a cast).
pub(super) fn page_sql(name: &str) -> String {
    format!(
        "SELECT seq, event_time, event_name, user_id, received_at, insert_id, session_dua, ip, browser, \
         browser_version, os, device_type, city, state, country, properties FROM ingest_events \
         WHERE app_key = $1 AND event_time >= $2 AND event_time < $3 \
         AND ({name} IS NULL OR event_name = {name}) AND (event_time, seq) > ($5, $6) \
         ORDER BY event_time, seq LIMIT $7"
    )
}

/// Within one write, the second event with an app key and insert id is a duplicate of the first.
pub(super) fn claim_in_memory(events: &[&NewEvent]) -> Fresh {
    let mut seen = HashSet::new();
    events
        .iter()
        .map(|e| match &e.insert_id {
            Some(id) => seen.insert((e.app_key.as_str(), id.as_str())),
            None => true,
        })
        .collect()
}

/// An event row of either database, its times already in milliseconds.
pub(super) fn stored<R>(
    row: &R,
    seq: i64,
    time_ms: i64,
    received_ms: i64,
) -> Result<StoredEvent, StoreError>
where
    R: Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let text = |name: &str| row.try_get::<Option<String>, _>(name);
    let properties: String = row.try_get("properties")?;
    Ok(StoredEvent {
        id: seq.to_string(),
        seq,
        event_name: row.try_get("event_name")?,
        user_id: row.try_get("user_id")?,
        event_timestamp_epoch: time_ms,
        time: common::time::rfc3339_ms(time_ms),
        received_at: common::time::rfc3339_ms(received_ms),
        insert_id: text("insert_id")?,
        session_dua: text("session_dua")?,
        ip: text("ip")?,
        browser: text("browser")?,
        browser_version: text("browser_version")?,
        os: text("os")?,
        device_type: text("device_type")?,
        city: text("city")?,
        state: text("state")?,
        country: text("country")?,
        properties: serde_json::from_str(&properties).unwrap_or_default(),
    })
}
