//! Event times as senders write them (docs/ingest-api.md, Event time): epoch milliseconds (13 digits, as a
//! number or a string), `yyyy-mm-ddThh:mm:ss`, `yyyy-mm-dd`, `yyyy/mm/dd`, `dd/mm/yyyy` and `dd-mm-yyyy`,
//! the month also as a three-letter name (`23-Nov-2026`), optionally led by a three-letter weekday name
//! that must agree with the date (`Mon, 2026-11-23`). A time without a zone is UTC.

use chrono::{Datelike, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use serde_json::Value;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [(&str, Weekday); 7] = [
    ("mon", Weekday::Mon),
    ("tue", Weekday::Tue),
    ("wed", Weekday::Wed),
    ("thu", Weekday::Thu),
    ("fri", Weekday::Fri),
    ("sat", Weekday::Sat),
    ("sun", Weekday::Sun),
];

/// What the formats are, for messages.
pub const EXPECTED: &str =
    "epoch milliseconds (13 digits), yyyy-mm-ddThh:mm:ss, yyyy-mm-dd, yyyy/mm/dd, \
    dd/mm/yyyy or dd-mm-yyyy (the month may be a three-letter name)";

/// Milliseconds since the Unix epoch of an event time, or a message saying what is wrong with it.
pub fn parse(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(n) => {
            if let Some(ms) = n.as_i64() {
                epoch_millis(ms)
            } else {
                match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => epoch_millis(f as i64),
                    _ => Err(format!("{n} is not a whole number of milliseconds")),
                }
            }
        }
        Value::String(s) => parse_text(s.trim()),
        other => Err(format!(
            "must be a number or a string, got {}",
            crate::track::validate::kind(other)
        )),
    }
}

fn epoch_millis(ms: i64) -> Result<i64, String> {
    if (1_000_000_000_000..10_000_000_000_000).contains(&ms) {
        Ok(ms)
    } else if (1_000_000_000..10_000_000_000).contains(&ms) {
        Err(format!(
            "{ms} has 10 digits: epoch seconds? event_timestamp_epoch is in milliseconds (13 digits)"
        ))
    } else {
        Err(format!("{ms} is not epoch milliseconds (13 digits)"))
    }
}

fn parse_text(text: &str) -> Result<i64, String> {
    let unknown = || format!("{text:?} is not a time: expected {EXPECTED}");
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let ms = text.parse::<i64>().map_err(|_| unknown())?;
        return epoch_millis(ms);
    }
    let (weekday, rest) = split_weekday(text);
    // The date ends at a `T` or a space that follows a digit (a `t` inside `Oct` does not end it).
    let bytes = rest.as_bytes();
    let split = (1..bytes.len())
        .find(|&i| matches!(bytes[i], b'T' | b't' | b' ') && bytes[i - 1].is_ascii_digit());
    let (date_part, time_part) = match split {
        Some(at) => (&rest[..at], Some(rest[at + 1..].trim())),
        None => (rest, None),
    };
    let date = parse_date(date_part).ok_or_else(unknown)?;
    if let Some(expected) = weekday {
        if date.weekday() != expected {
            return Err(format!(
                "{text:?} names a {expected:?} but {date} is a {:?}",
                date.weekday()
            ));
        }
    }
    let (time, offset_secs) = match time_part {
        Some(t) if !t.is_empty() => parse_time(t).ok_or_else(unknown)?,
        _ => (NaiveTime::MIN, 0),
    };
    let local = date.and_time(time);
    let utc = Utc.from_utc_datetime(&local) - chrono::Duration::seconds(offset_secs);
    Ok(utc.timestamp_millis())
}

/// A leading weekday name (`Mon`, `Mon,`), which the date must then fall on.
fn split_weekday(text: &str) -> (Option<Weekday>, &str) {
    let head = text.get(..3).unwrap_or("").to_ascii_lowercase();
    if let Some((_, day)) = WEEKDAYS.iter().find(|(name, _)| *name == head) {
        let rest = &text[3..];
        let rest = rest.strip_prefix(',').unwrap_or(rest);
        if rest.starts_with(' ') {
            return (Some(*day), rest.trim_start());
        }
    }
    (None, text)
}

fn parse_date(text: &str) -> Option<NaiveDate> {
    let separator = if text.contains('-') { '-' } else { '/' };
    let parts: Vec<&str> = text.split(separator).collect();
    let [a, b, c] = parts.as_slice() else {
        return None;
    };
    let (year, month, day) = if a.len() == 4 {
        (a, b, c)
    } else if c.len() == 4 {
        (c, b, a)
    } else {
        return None;
    };
    let year: i32 = digits(year)?;
    let day: u32 = digits(day).filter(|_| day.len() <= 2)?;
    let month: u32 = if month.len() == 3 && month.bytes().all(|b| b.is_ascii_alphabetic()) {
        let name = month.to_ascii_lowercase();
        MONTHS.iter().position(|m| *m == name)? as u32 + 1
    } else {
        digits(month).filter(|_| month.len() <= 2)?
    };
    NaiveDate::from_ymd_opt(year, month, day)
}

/// `hh:mm[:ss[.fraction]]` with an optional `Z` or `±hh:mm` / `±hhmm`; the offset in seconds east of UTC.
fn parse_time(text: &str) -> Option<(NaiveTime, i64)> {
    let (clock, offset) = if let Some(clock) = text.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else if let Some(at) = text.rfind(['+', '-']) {
        let sign = if text.as_bytes()[at] == b'-' { -1 } else { 1 };
        let zone = text[at + 1..].replace(':', "");
        if zone.len() != 4 {
            return None;
        }
        let hours: i64 = digits(&zone[..2])?;
        let minutes: i64 = digits(&zone[2..])?;
        if hours > 23 || minutes > 59 {
            return None;
        }
        (&text[..at], sign * (hours * 3600 + minutes * 60))
    } else {
        (text, 0)
    };
    let (whole, fraction) = match clock.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (clock, None),
    };
    let fields: Vec<&str> = whole.split(':').collect();
    let (hour, minute, second) = match fields.as_slice() {
        [h, m] => (digits(h)?, digits(m)?, 0),
        [h, m, s] => (digits(h)?, digits(m)?, digits(s)?),
        _ => return None,
    };
    let nanos = match fraction {
        Some(f) if !f.is_empty() && f.len() <= 9 => {
            let value: u32 = digits(f)?;
            value * 10u32.pow(9 - f.len() as u32)
        }
        Some(_) => return None,
        None => 0,
    };
    Some((
        NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?,
        offset,
    ))
}

fn digits<T: std::str::FromStr>(text: &str) -> Option<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ms(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> i64 {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn every_listed_format_reads_as_the_same_instant() {
        let midnight = ms(2026, 11, 23, 0, 0, 0);
        for text in [
            "2026-11-23",
            "2026/11/23",
            "23/11/2026",
            "23-11-2026",
            "2026-Nov-23",
            "23/nov/2026",
            "23-NOV-2026",
            "2026/Nov/23",
            "Mon, 23-Nov-2026 00:00:00",
            "Mon, 2026-11-23",
            "Mon 23/Nov/2026",
            "mon, 23-11-2026",
            "2026-11-23T00:00:00",
            "2026-11-23T00:00",
            "2026-11-23 00:00:00",
            "2026-11-23T00:00:00Z",
            "2026-11-23T01:00:00+01:00",
            "2026-11-22T19:00:00-0500",
            "1795392000000",
        ] {
            assert_eq!(parse(&json!(text)), Ok(midnight), "{text}");
        }
        assert_eq!(parse(&json!(1795392000000_i64)), Ok(midnight));
        assert_eq!(parse(&json!(1795392000000.0)), Ok(midnight));
        assert_eq!(
            parse(&json!("2026-11-23T10:15:30")),
            Ok(ms(2026, 11, 23, 10, 15, 30))
        );
        assert_eq!(
            parse(&json!("2026-11-23T10:15:30.25")),
            Ok(ms(2026, 11, 23, 10, 15, 30) + 250)
        );
        assert_eq!(
            parse(&json!("05-Oct-2026T08:00:00")),
            Ok(ms(2026, 10, 5, 8, 0, 0))
        );
        assert_eq!(
            parse(&json!("05/01/2026")),
            Ok(ms(2026, 1, 5, 0, 0, 0)),
            "dd/mm, not mm/dd"
        );
    }

    #[test]
    fn wrong_times_say_what_is_wrong() {
        let message = |v: Value| parse(&v).expect_err("invalid");
        assert!(message(json!(1763856000)).contains("epoch seconds"));
        assert!(message(json!(17953920000000_i64)).contains("13 digits"));
        assert!(message(json!(1.5e12 + 0.5)).contains("whole number"));
        assert!(message(json!("2026-02-30")).contains("not a time"));
        assert!(
            message(json!("11/23/2026")).contains("not a time"),
            "mm/dd is not a format"
        );
        assert!(message(json!("2026-Foo-01")).contains("not a time"));
        assert!(message(json!("yesterday")).contains("expected epoch milliseconds"));
        assert!(message(json!("2026-11-23T25:00:00")).contains("not a time"));
        assert!(
            message(json!("Tue, 2026-11-23")).contains("Mon"),
            "weekday must agree"
        );
        assert!(message(json!(true)).contains("number or a string"));
        assert!(message(json!("")).contains("not a time"));
    }
}
