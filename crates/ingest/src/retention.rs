//! How long events are kept (`retention_days`, docs/ingest-api.md, Storage): events older than that are
//! refused at `/track`, and once an hour the months that ended more than a day before the oldest time
//! still accepted are removed whole (their partitions dropped on PostgreSQL). An event is so kept at least
//! `retention_days`, and at most a month and a day longer. The day between the two limits keeps a
//! replica whose clock runs behind from accepting an event into a month another replica dropped.
//!
//! The same hourly round creates this month's and next month's partitions on PostgreSQL, whatever the
//! retention: a month's first events then find theirs there, rather than waiting to create it behind a
//! month being removed.

use std::time::Duration;

use chrono::{DateTime, Datelike, Utc};
use common::db::Database;

use crate::store::{self, Partitions};

/// A day in milliseconds.
const DAY_MS: i64 = 86_400_000;

/// How often the old months are looked for.
const EVERY: Duration = Duration::from_secs(3600);

/// The oldest event time `/track` accepts at `now_ms` when events are kept `days` days; None when they
/// are kept for ever (0).
pub fn oldest_accepted_ms(now_ms: i64, days: u32) -> Option<i64> {
    (days > 0).then(|| now_ms - i64::from(days) * DAY_MS)
}

/// The first instant of the oldest month kept at `now_ms`: every month ending a day or more before the
/// oldest accepted time goes. None when events are kept for ever.
pub fn cutoff_ms(now_ms: i64, days: u32) -> Option<i64> {
    let limit = oldest_accepted_ms(now_ms, days)? - DAY_MS;
    let t = DateTime::from_timestamp_millis(limit)?;
    crate::model::month_start(t.year(), t.month()).map(|first| first.timestamp_millis())
}

/// Prepares the coming months and removes those past the retention, at start and then every hour, for
/// as long as `alive` says the service runs.
pub async fn run(
    db: Database,
    partitions: std::sync::Arc<Partitions>,
    days: u32,
    alive: impl Fn() -> bool,
) {
    let mut every = tokio::time::interval(EVERY);
    loop {
        every.tick().await;
        if !alive() {
            return;
        }
        let now = Utc::now().timestamp_millis();
        if let Err(e) = store::prepare_months(&db, &partitions, now).await {
            tracing::warn!(error = %e, "creating the coming months' partitions failed; trying again later");
        }
        let Some(cutoff) = cutoff_ms(now, days) else {
            continue;
        };
        match store::drop_events_before(&db, &partitions, cutoff).await {
            Ok(0) => {}
            // Months on PostgreSQL, events on SQLite.
            Ok(removed) => tracing::info!(
                removed,
                before = %common::time::rfc3339_ms(cutoff),
                "events past the retention removed"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "removing events past the retention failed; trying again later")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn whole_months_go_a_day_after_they_leave_the_window() {
        let now = ms("2026-11-27T10:00:00Z");
        assert_eq!(oldest_accepted_ms(now, 0), None);
        assert_eq!(cutoff_ms(now, 0), None);
        assert_eq!(
            oldest_accepted_ms(now, 30),
            Some(ms("2026-10-28T10:00:00Z"))
        );
        // 30 days back is 2026-10-28; a day earlier is still October, so October stays.
        assert_eq!(cutoff_ms(now, 30), Some(ms("2026-10-01T00:00:00Z")));
        // 26 days back is 2026-11-01T10:00; a day earlier is October 31: October stays.
        assert_eq!(cutoff_ms(now, 26), Some(ms("2026-10-01T00:00:00Z")));
        // 25 days back is 2026-11-02T10:00, a day earlier November 1: October goes.
        assert_eq!(cutoff_ms(now, 25), Some(ms("2026-11-01T00:00:00Z")));
        // Across a year.
        assert_eq!(
            cutoff_ms(ms("2027-01-15T00:00:00Z"), 45),
            Some(ms("2026-11-01T00:00:00Z"))
        );
        // The cutoff is never after the oldest accepted time, less a day.
        for days in [1, 2, 7, 28, 31, 90, 365, 3650] {
            for hour in 0..24 * 60 {
                let now = ms("2026-01-01T00:00:00Z") + hour * 3_600_000 * 7;
                let cutoff = cutoff_ms(now, days).unwrap();
                assert!(cutoff <= oldest_accepted_ms(now, days).unwrap() - DAY_MS);
                assert!(oldest_accepted_ms(now, days).unwrap() - cutoff <= 33 * DAY_MS);
            }
        }
    }
}
