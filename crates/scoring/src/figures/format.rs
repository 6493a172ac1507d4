//! How the statistics write numbers (docs/figures.md, Formats): durations as `H:MM:SS`, ratios as
//! decimal strings with four places, so clients never see binary floating-point noise.

/// Seconds as `H:MM:SS`, rounded to the nearest second; hours are not padded and may exceed 24. A
/// negative or non-finite value (never a figure, but a sum of rounding errors could be) reads as 0.
pub fn hms(seconds: f64) -> String {
    Hms(seconds).to_string()
}

/// `hms` written where it goes: `with_text` hands its text to a closure (`/appstats` writes 60,000
/// figures over 30 days of 100 agents, each straight into the JSON), `Display` writes the same.
#[derive(Debug, Clone, Copy)]
pub struct Hms(pub f64);

impl Hms {
    /// Calls `with` on the text, built on the stack.
    pub fn with_text<R>(&self, with: impl FnOnce(&str) -> R) -> R {
        self.with_bytes(|bytes| with(Backwards::text(bytes)))
    }

    /// Calls `with` on the text's bytes (ASCII), unchecked as UTF-8 text.
    pub fn with_bytes<R>(&self, with: impl FnOnce(&[u8]) -> R) -> R {
        let seconds = self.0;
        let total = if seconds.is_finite() && seconds > 0.0 {
            seconds.round() as u64
        } else {
            0
        };
        let mut text = Backwards::new();
        text.number(total % 60, 2);
        text.byte(b':');
        text.number(total / 60 % 60, 2);
        text.byte(b':');
        text.number(total / 3600, 1);
        with(text.as_bytes())
    }
}

impl std::fmt::Display for Hms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

/// A number with four decimal places; `-0.0000` is written `0.0000`.
pub fn decimal4(value: f64) -> String {
    Decimal4(value).to_string()
}

/// `decimal4` written where it goes, as [`Hms`]. Formatting a float to four places (`{:.4}`: the exact
/// decimal value of the binary number, rounded) costs a few hundred nanoseconds; a value from 0 to 10^9
/// that is not within 10^-6 of a tie at the fifth place is rounded as `value * 10^4` to a whole number
/// instead, which gives the same digits (the product is off the exact one by under 10^-7 there), and
/// written as two integers. Any other value goes the way of `{:.4}`.
#[derive(Debug, Clone, Copy)]
pub struct Decimal4(pub f64);

impl Decimal4 {
    /// Calls `with` on the text, built on the stack unless the value needs `{:.4}`.
    pub fn with_text<R>(&self, with: impl FnOnce(&str) -> R) -> R {
        self.with_bytes(|bytes| with(Backwards::text(bytes)))
    }

    /// Calls `with` on the text's bytes (ASCII), unchecked as UTF-8 text.
    pub fn with_bytes<R>(&self, with: impl FnOnce(&[u8]) -> R) -> R {
        let value = if self.0.is_finite() { self.0 } else { 0.0 };
        if (0.0..1e9).contains(&value) {
            let scaled = value * 10_000.0;
            if (scaled - scaled.floor() - 0.5).abs() > 1e-6 {
                let whole = scaled.round() as u64;
                let mut text = Backwards::new();
                text.number(whole % 10_000, 4);
                text.byte(b'.');
                text.number(whole / 10_000, 1);
                return with(text.as_bytes());
            }
        }
        let text = format!("{value:.4}");
        with(if text == "-0.0000" { "0.0000" } else { &text }.as_bytes())
    }
}

impl std::fmt::Display for Decimal4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

/// A short ASCII text written from its end backwards on the stack, so that a figure costs neither an
/// allocation nor the formatting machinery: `write!` with padded integers was about a sixth of the
/// processor time of an `/appstats` answer of 30,000 stats objects.
struct Backwards {
    bytes: [u8; 48],
    start: usize,
}

impl Backwards {
    fn new() -> Self {
        Backwards {
            bytes: [0; 48],
            start: 48,
        }
    }

    fn byte(&mut self, byte: u8) {
        self.start -= 1;
        self.bytes[self.start] = byte;
    }

    /// The decimal digits of `n`, at least `width` of them (zeros before).
    fn number(&mut self, mut n: u64, width: usize) {
        let end = self.start;
        loop {
            self.byte(b'0' + (n % 10) as u8);
            n /= 10;
            if n == 0 && end - self.start >= width {
                break;
            }
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[self.start..]
    }

    /// The text of bytes a figure was written as: ASCII digits and punctuation, or `{:.4}`'s text.
    fn text(bytes: &[u8]) -> &str {
        std::str::from_utf8(bytes).expect("ASCII digits and punctuation")
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
        // As the formatting machinery writes them, up to the longest (u64::MAX seconds).
        let mut totals: Vec<u64> = (0..200_000).collect();
        totals.extend([u64::MAX, u64::MAX / 3, 10_u64.pow(15) + 7]);
        for total in totals {
            let seconds = total as f64;
            let whole = seconds.round() as u64;
            let expected = format!("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60);
            assert_eq!(hms(seconds), expected, "{total}");
        }
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

    /// The integer way of `Decimal4` writes what `{:.4}` writes: ratios of small counts (those of the
    /// statistics, ties at the fifth place among them), sums of coverage, and pseudo-random values.
    #[test]
    fn decimals_are_those_of_the_float_formatting() {
        let general = |v: f64| {
            let text = format!("{v:.4}");
            if text == "-0.0000" {
                "0.0000".to_string()
            } else {
                text
            }
        };
        let mut values = vec![
            0.0,
            -0.0,
            1e-5,
            5e-5,
            0.00015,
            0.03125,
            0.5,
            1.0,
            2.5e-5,
            999_999_999.999_95,
        ];
        for whole in 1..=2000u32 {
            for part in 0..=whole.min(400) {
                values.push(f64::from(part) / f64::from(whole));
                values.push(f64::from(part) * 0.5 / f64::from(whole));
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
            values.push(unit);
            values.push(unit * 1e6);
            values.push((unit * 1e8).round() / 1e4 + 5e-5);
            values.push(-unit * 1e-4);
        }
        for v in values {
            assert_eq!(decimal4(v), general(v), "{v:e}");
        }
        assert_eq!(hms(90_001.4), Hms(90_001.4).to_string());
    }
}
