//! The one byte range a `Range` header asks of a recording (RFC 9110, 14.2), so a browser's `<audio>`
//! can seek. Only a single range is served; a header of several ranges, or of another unit, gets the
//! whole recording, as the RFC allows.

/// What a `Range` header asks of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    /// The whole object (no header, or one this server does not serve in parts).
    Whole,
    /// Bytes `start..=end`.
    Part { start: u64, end: u64 },
    /// A range that starts past the end: 416.
    Unsatisfiable,
}

/// The range `header` asks of an object of `len` bytes.
pub fn asked(header: Option<&str>, len: u64) -> Asked {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Asked::Whole;
    };
    if spec.contains(',') {
        return Asked::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Asked::Whole;
    };
    let number = |text: &str| -> Option<u64> {
        let text = text.trim();
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    match (first.trim().is_empty(), number(first), number(last)) {
        // `-N`: the last N bytes.
        (true, _, Some(suffix)) => {
            if suffix == 0 || len == 0 {
                Asked::Unsatisfiable
            } else {
                Asked::Part {
                    start: len.saturating_sub(suffix),
                    end: len - 1,
                }
            }
        }
        (false, Some(start), last) if last.is_some() || last_is_open(last, spec) => {
            if start >= len {
                return Asked::Unsatisfiable;
            }
            let end = last.map_or(len - 1, |last| last.min(len - 1));
            if end < start {
                Asked::Whole
            } else {
                Asked::Part { start, end }
            }
        }
        _ => Asked::Whole,
    }
}

/// Whether `N-` leaves the end open (rather than giving an end that is not a number).
fn last_is_open(last: Option<u64>, spec: &str) -> bool {
    last.is_none() && spec.trim_end().ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_ranges_are_served_in_part() {
        assert_eq!(
            asked(Some("bytes=0-99"), 1000),
            Asked::Part { start: 0, end: 99 }
        );
        assert_eq!(
            asked(Some("bytes=900-"), 1000),
            Asked::Part {
                start: 900,
                end: 999
            }
        );
        assert_eq!(
            asked(Some("bytes=-10"), 1000),
            Asked::Part {
                start: 990,
                end: 999
            }
        );
        assert_eq!(
            asked(Some("bytes=-5000"), 1000),
            Asked::Part { start: 0, end: 999 }
        );
        assert_eq!(
            asked(Some("bytes=10-5000"), 1000),
            Asked::Part {
                start: 10,
                end: 999
            }
        );
    }

    #[test]
    fn what_cannot_be_served_in_part_is_whole_or_unsatisfiable() {
        assert_eq!(asked(None, 1000), Asked::Whole);
        assert_eq!(asked(Some("bytes=0-1,5-9"), 1000), Asked::Whole);
        assert_eq!(asked(Some("items=0-1"), 1000), Asked::Whole);
        assert_eq!(asked(Some("bytes=9-3"), 1000), Asked::Whole);
        assert_eq!(asked(Some("bytes=a-3"), 1000), Asked::Whole);
        assert_eq!(asked(Some("bytes=3-x"), 1000), Asked::Whole);
        assert_eq!(asked(Some("bytes=+3-9"), 1000), Asked::Whole);
        assert_eq!(
            asked(Some("bytes=99999999999999999999999-"), 1000),
            Asked::Whole
        );
        assert_eq!(asked(Some("bytes=1000-"), 1000), Asked::Unsatisfiable);
        assert_eq!(asked(Some("bytes=-0"), 1000), Asked::Unsatisfiable);
        assert_eq!(asked(Some("bytes=0-"), 0), Asked::Unsatisfiable);
    }
}
