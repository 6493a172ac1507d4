//! How the services write an instant in their answers and stored rows: RFC 3339 in UTC with
//! milliseconds (`2026-11-27T10:00:00.000Z`). One format everywhere, so that such texts compare and sort
//! as the instants they name.

use chrono::{DateTime, SecondsFormat, Utc};

/// An instant as the services write it.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The current instant as the services write it.
pub fn now_rfc3339() -> String {
    rfc3339(Utc::now())
}

/// Milliseconds from the Unix epoch as the services write an instant; the epoch itself for an instant
/// out of range.
pub fn rfc3339_ms(ms: i64) -> String {
    rfc3339(DateTime::from_timestamp_millis(ms).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_in_utc_sorting_as_instants() {
        let t = DateTime::parse_from_rfc3339("2026-11-27T11:00:00.5+01:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(rfc3339(t), "2026-11-27T10:00:00.500Z");
        assert_eq!(rfc3339_ms(t.timestamp_millis()), "2026-11-27T10:00:00.500Z");
        assert_eq!(rfc3339_ms(i64::MAX), "1970-01-01T00:00:00.000Z");
        assert!(rfc3339_ms(999) < rfc3339_ms(1_000));
        assert!(now_rfc3339() > rfc3339(t));
    }
}
