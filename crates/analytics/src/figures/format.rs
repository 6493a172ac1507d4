//! How the statistics write numbers (docs/figures.md, Formats): durations as `H:MM:SS`, ratios as
//! decimal strings with four places, so clients never see binary floating-point noise.

/// Seconds as `H:MM:SS`, rounded to the nearest second; hours are not padded and may exceed 24. A
/// negative or non-finite value (never a figure, but a sum of rounding errors could be) reads as 0.
pub fn hms(seconds: f64) -> String {
    let total = if seconds.is_finite() && seconds > 0.0 {
        seconds.round() as u64
    } else {
        0
    };
    format!("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60)
}

/// A number with four decimal places; `-0.0000` is written `0.0000`.
pub fn decimal4(value: f64) -> String {
    let value = if value.is_finite() { value } else { 0.0 };
    let text = format!("{value:.4}");
    if text == "-0.0000" {
        "0.0000".to_string()
    } else {
        text
    }
}

/// `part / whole`, 0 when there is no whole.
pub fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

/// A number rounded to four decimal places (the JSON numbers of the statistics).
pub fn round4(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_hours_minutes_seconds() {
        assert_eq!(hms(0.0), "0:00:00");
        assert_eq!(hms(59.4), "0:00:59");
        assert_eq!(hms(59.5), "0:01:00");
        assert_eq!(hms(3_725.0), "1:02:05");
        // 25 h 0 min 1 s: hours go past a day.
        assert_eq!(hms(90_001.0), "25:00:01");
        assert_eq!(hms(-3.0), "0:00:00");
        assert_eq!(hms(f64::NAN), "0:00:00");
    }

    #[test]
    fn decimals_have_four_places() {
        assert_eq!(decimal4(0.5), "0.5000");
        assert_eq!(decimal4(2.0 / 3.0), "0.6667");
        assert_eq!(decimal4(12.0), "12.0000");
        assert_eq!(decimal4(-0.00001), "0.0000");
        assert_eq!(ratio(1.0, 0.0), 0.0);
        assert_eq!(ratio(1.0, 4.0), 0.25);
        assert_eq!(round4(13.333_333), 13.3333);
    }
}
