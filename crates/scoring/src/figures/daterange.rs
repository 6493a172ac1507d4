//! The `daterange` of `/stats` and `/appstats` (docs/figures.md, Date ranges): `$start-$end`, each value
//! `YYYYMMDD` optionally followed by `HHmmss`, either may be left out (start: 1 January 1900, end: the
//! current date in the organization's time zone), the hyphen is required, and the range is closed. A
//! range that does not read is not an error: it selects nothing, and so does a range whose start is after
//! its end (ranges are taken as positive, never swapped).
//!
//! The statistics read whole days from the daily rollups; a day the range starts or ends within is read
//! from its calls (`Plan`), so a time in the range is exact to the second.

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};

/// The default start: 1 January 1900, 00:00:00.
pub fn default_start() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(1900, 1, 1)
        .expect("a valid date")
        .and_time(NaiveTime::MIN)
}

fn last_second() -> NaiveTime {
    NaiveTime::from_hms_opt(23, 59, 59).expect("a valid time")
}

/// A closed range of local times: the calls whose `datetime` lies in [start, end].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateRange {
    pub start: NaiveDateTime,
    pub end: NaiveDateTime,
}

/// A day read from its calls, between two local times of that day (both included), written as the
/// calls' `datetime` is (YYYY-MM-DDTHH:MM:SS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutDay {
    pub day: String,
    pub from: String,
    pub to: String,
}

/// How a range is read: a span of whole days (YYYY-MM-DD, both included) from the rollups, and at most
/// two days from their calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub whole: Option<(String, String)>,
    pub cut: Vec<CutDay>,
}

fn day(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

fn stamp(time: NaiveDateTime) -> String {
    time.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// One value of a range: empty, YYYYMMDD or YYYYMMDDHHmmss; `end` makes a bare date mean its last second.
fn value(text: &str, end: bool) -> Option<Option<NaiveDateTime>> {
    if text.is_empty() {
        return Some(None);
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match text.len() {
        8 => {
            let date = NaiveDate::parse_from_str(text, "%Y%m%d").ok()?;
            let time = if end { last_second() } else { NaiveTime::MIN };
            Some(Some(date.and_time(time)))
        }
        14 => {
            let date = NaiveDate::parse_from_str(&text[..8], "%Y%m%d").ok()?;
            let time = NaiveTime::parse_from_str(&text[8..], "%H%M%S").ok()?;
            Some(Some(date.and_time(time)))
        }
        _ => None,
    }
}

impl DateRange {
    /// The range `text` names, `today` being the current date in the organization's time zone; None
    /// when it selects nothing (it does not read, or it starts after it ends).
    pub fn parse(text: &str, today: NaiveDate) -> Option<DateRange> {
        let (start, end) = text.split_once('-')?;
        let start = value(start, false)?.unwrap_or_else(default_start);
        let end = value(end, true)?.unwrap_or_else(|| today.and_time(last_second()));
        (start <= end).then_some(DateRange { start, end })
    }

    /// The whole of one day.
    pub fn day(date: NaiveDate) -> DateRange {
        DateRange {
            start: date.and_time(NaiveTime::MIN),
            end: date.and_time(last_second()),
        }
    }

    /// Which days are read whole and which from their calls.
    pub fn plan(&self) -> Plan {
        let (first, last) = (self.start.date(), self.end.date());
        let starts_whole = self.start.time() == NaiveTime::MIN;
        let ends_whole = self.end.time() == last_second();
        let mut plan = Plan::default();
        if first == last && !(starts_whole && ends_whole) {
            plan.cut.push(CutDay {
                day: day(first),
                from: stamp(self.start),
                to: stamp(self.end),
            });
            return plan;
        }
        let mut whole_from = first;
        let mut whole_to = last;
        if !starts_whole {
            plan.cut.push(CutDay {
                day: day(first),
                from: stamp(self.start),
                to: stamp(first.and_time(last_second())),
            });
            whole_from = first + Duration::days(1);
        }
        if !ends_whole {
            plan.cut.push(CutDay {
                day: day(last),
                from: stamp(last.and_time(NaiveTime::MIN)),
                to: stamp(self.end),
            });
            whole_to = last - Duration::days(1);
        }
        if whole_from <= whole_to {
            plan.whole = Some((day(whole_from), day(whole_to)));
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 23).unwrap()
    }

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").unwrap()
    }

    fn range(text: &str) -> Option<(NaiveDateTime, NaiveDateTime)> {
        DateRange::parse(text, today()).map(|r| (r.start, r.end))
    }

    #[test]
    fn rule_1_start_hyphen_end_closed() {
        assert_eq!(
            range("20261101-20261130"),
            Some((at("2026-11-01T00:00:00"), at("2026-11-30T23:59:59")))
        );
        // The hyphen is required: a single date is no range.
        assert_eq!(range("20261101"), None);
        assert_eq!(range(""), None);
        // Closed: a one-second range holds that second.
        assert_eq!(
            range("20261101101500-20261101101500"),
            Some((at("2026-11-01T10:15:00"), at("2026-11-01T10:15:00")))
        );
    }

    #[test]
    fn rule_2_dates_with_optional_times() {
        assert_eq!(
            range("20261101083000-20261102171500"),
            Some((at("2026-11-01T08:30:00"), at("2026-11-02T17:15:00")))
        );
        // A bare end date runs to its last second, a bare start date from its first.
        assert_eq!(
            range("20261101083000-20261102"),
            Some((at("2026-11-01T08:30:00"), at("2026-11-02T23:59:59")))
        );
    }

    #[test]
    fn rule_3_a_range_that_starts_after_it_ends_selects_nothing() {
        assert_eq!(range("20261102-20261101"), None);
        assert_eq!(range("20261101120001-20261101120000"), None);
        assert!(range("20261101-20261101").is_some());
    }

    #[test]
    fn rule_5_what_does_not_read_selects_nothing() {
        for text in [
            "2026-11-01",
            "20261301-",
            "20260230-",
            "-2026110",
            "202611011200-",
            "20261101250000-",
            "20261101-x",
            "20261101--20261102",
            " 20261101-",
            "+2026110-",
        ] {
            assert_eq!(range(text), None, "{text}");
        }
    }

    #[test]
    fn rule_6_defaults() {
        assert_eq!(
            range("-"),
            Some((at("1900-01-01T00:00:00"), at("2026-11-23T23:59:59")))
        );
        assert_eq!(
            range("20261120-"),
            Some((at("2026-11-20T00:00:00"), at("2026-11-23T23:59:59")))
        );
        assert_eq!(
            range("-18991231"),
            None,
            "before the default start: nothing"
        );
        assert_eq!(
            range("-19000101"),
            Some((at("1900-01-01T00:00:00"), at("1900-01-01T23:59:59")))
        );
        // A start after today with the end left out starts after it ends.
        assert_eq!(range("20261124-"), None);
    }

    #[test]
    fn whole_days_come_from_rollups_and_cut_days_from_calls() {
        let plan = |text: &str| DateRange::parse(text, today()).unwrap().plan();
        assert_eq!(
            plan("20261101-20261103"),
            Plan {
                whole: Some(("2026-11-01".into(), "2026-11-03".into())),
                cut: vec![]
            }
        );
        assert_eq!(
            plan("20261101120000-20261103"),
            Plan {
                whole: Some(("2026-11-02".into(), "2026-11-03".into())),
                cut: vec![CutDay {
                    day: "2026-11-01".into(),
                    from: "2026-11-01T12:00:00".into(),
                    to: "2026-11-01T23:59:59".into()
                }]
            }
        );
        assert_eq!(
            plan("20261101120000-20261102060000"),
            Plan {
                whole: None,
                cut: vec![
                    CutDay {
                        day: "2026-11-01".into(),
                        from: "2026-11-01T12:00:00".into(),
                        to: "2026-11-01T23:59:59".into()
                    },
                    CutDay {
                        day: "2026-11-02".into(),
                        from: "2026-11-02T00:00:00".into(),
                        to: "2026-11-02T06:00:00".into()
                    }
                ]
            }
        );
        assert_eq!(
            plan("20261101080000-20261101170000"),
            Plan {
                whole: None,
                cut: vec![CutDay {
                    day: "2026-11-01".into(),
                    from: "2026-11-01T08:00:00".into(),
                    to: "2026-11-01T17:00:00".into()
                }]
            }
        );
        // Explicit first and last seconds are whole days.
        assert_eq!(
            plan("20261101000000-20261101235959"),
            Plan {
                whole: Some(("2026-11-01".into(), "2026-11-01".into())),
                cut: vec![]
            }
        );
        assert_eq!(
            DateRange::day(today()).plan().whole,
            Some(("2026-11-23".into(), "2026-11-23".into()))
        );
    }
}
