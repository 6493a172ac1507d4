//! Diarization error rate (DER), the standard measure of a diarization against a reference.
//!
//! DER = (missed speech + false alarm + speaker confusion) / total reference speech, all in seconds
//! (NIST RT-09). The time line is cut at every boundary of either side; on each piece of length d with
//! `R` reference speakers and `H` hypothesis speakers talking, of which `C` are the same speaker after
//! mapping hypothesis labels to reference labels:
//! missed = max(0, R - H) d, false alarm = max(0, H - R) d, confusion = (min(R, H) - C) d,
//! and the reference speech counted is R d. Overlapping segments of one speaker count once.
//!
//! Labels are arbitrary names, so the hypothesis is scored under both mappings of its labels 0 and 1
//! (as they are, and swapped; any other label maps to itself) and the lower error is returned: the
//! optimal mapping for two speakers. By default no collar is used: every boundary error counts.
//! [`der_with_collar`] leaves out `collar` seconds either side of each reference boundary, as the NIST
//! scoring tool's `-c` does (0.25 s is common), for comparing with published figures.

/// A segment: start and end in seconds, speaker label.
pub type Turn = (f64, f64, u8);

/// The diarization error rate of `hypothesis` against `reference`, with no collar, under the better of
/// the two mappings of labels 0 and 1. With no reference speech it is 0.0 when the hypothesis has no
/// speech either, and infinite otherwise (any false alarm over nothing).
pub fn der(reference: &[Turn], hypothesis: &[Turn]) -> f64 {
    der_with_collar(reference, hypothesis, 0.0)
}

/// [`der`] with `collar` seconds either side of every reference segment boundary left out of the
/// scoring (of every term, including the total).
pub fn der_with_collar(reference: &[Turn], hypothesis: &[Turn], collar: f64) -> f64 {
    let identity = errors(reference, hypothesis, collar, false);
    let swapped = errors(reference, hypothesis, collar, true);
    let best = identity.error.min(swapped.error);
    if identity.total > 0.0 {
        best / identity.total
    } else if best > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

struct Errors {
    error: f64,
    total: f64,
}

fn errors(reference: &[Turn], hypothesis: &[Turn], collar: f64, swap: bool) -> Errors {
    let map = |l: u8| if swap && l < 2 { 1 - l } else { l };
    let hyp: Vec<Turn> = hypothesis.iter().map(|&(s, e, l)| (s, e, map(l))).collect();
    let collars: Vec<(f64, f64)> = if collar > 0.0 {
        reference
            .iter()
            .flat_map(|&(s, e, _)| [(s - collar, s + collar), (e - collar, e + collar)])
            .collect()
    } else {
        Vec::new()
    };
    let mut cuts: Vec<f64> = reference
        .iter()
        .chain(&hyp)
        .flat_map(|&(s, e, _)| [s, e])
        .chain(collars.iter().flat_map(|&(s, e)| [s, e]))
        .filter(|t| t.is_finite())
        .collect();
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let mut labels: Vec<u8> = reference.iter().chain(&hyp).map(|t| t.2).collect();
    labels.sort_unstable();
    labels.dedup();

    let active = |turns: &[Turn], label: u8, t: f64| {
        turns.iter().any(|&(s, e, l)| l == label && s <= t && t < e)
    };
    let mut out = Errors {
        error: 0.0,
        total: 0.0,
    };
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let d = b - a;
        if d <= 0.0 {
            continue;
        }
        let mid = 0.5 * (a + b);
        if collars.iter().any(|&(s, e)| s <= mid && mid < e) {
            continue;
        }
        let (mut r, mut h, mut c) = (0usize, 0usize, 0usize);
        for &label in &labels {
            let in_ref = active(reference, label, mid);
            let in_hyp = active(&hyp, label, mid);
            r += usize::from(in_ref);
            h += usize::from(in_hyp);
            c += usize::from(in_ref && in_hyp);
        }
        out.total += r as f64 * d;
        out.error += (r.saturating_sub(h) + h.saturating_sub(r) + (r.min(h) - c)) as f64 * d;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn perfect_and_swapped_labels_score_zero() {
        let reference = [(0.0, 2.0, 0), (2.5, 4.0, 1), (4.0, 5.0, 0)];
        assert_eq!(der(&reference, &reference), 0.0);
        let swapped: Vec<Turn> = reference.iter().map(|&(s, e, l)| (s, e, 1 - l)).collect();
        assert_eq!(der(&reference, &swapped), 0.0);
    }

    #[test]
    fn confusion_missed_and_false_alarm_by_hand() {
        // Reference: 0-4 speaker 0, 4-6 speaker 1: 6 s of speech.
        let reference = [(0.0, 4.0, 0), (4.0, 6.0, 1)];
        // Hypothesis: 0-3 label 0, 3-6 label 1, nothing else.
        // Identity mapping: 3-4 is confused (1 s): 1/6. Swapped: 0-3 and 4-6 are confused (5 s): 5/6.
        let hypothesis = [(0.0, 3.0, 0), (3.0, 6.0, 1)];
        assert!(close(der(&reference, &hypothesis), 1.0 / 6.0));

        // Missed: the hypothesis starts at 1 (1 s missed); false alarm: it goes on to 7 (1 s).
        let hypothesis = [(1.0, 4.0, 0), (4.0, 7.0, 1)];
        assert!(close(der(&reference, &hypothesis), 2.0 / 6.0));

        // Everything missed: 1.0. Everything one label: the best mapping confuses speaker 1 only: 2/6.
        assert!(close(der(&reference, &[]), 1.0));
        assert!(close(der(&reference, &[(0.0, 6.0, 1)]), 2.0 / 6.0));
    }

    #[test]
    fn overlap_counts_each_speaker() {
        // Reference: speaker 0 over 0-4, speaker 1 over 2-6: 8 s of speaker time (2-4 overlaps).
        let reference = [(0.0, 4.0, 0), (2.0, 6.0, 1)];
        // Hypothesis without overlap: 0-3 label 0, 3-6 label 1.
        // 0-2: R=1 H=1 correct. 2-3: R=2 H=1, C=1: 1 s missed. 3-4: R=2 H=1 C=1: 1 s missed.
        // 4-6: correct. Error 2 s of 8.
        assert!(close(
            der(&reference, &[(0.0, 3.0, 0), (3.0, 6.0, 1)]),
            2.0 / 8.0
        ));
        // Overlapping segments of one speaker in the hypothesis count once.
        assert!(close(
            der(&[(0.0, 4.0, 0)], &[(0.0, 3.0, 0), (1.0, 4.0, 0)]),
            0.0
        ));
    }

    #[test]
    fn collar_leaves_out_boundaries() {
        let reference = [(0.0, 4.0, 0), (4.0, 6.0, 1)];
        let hypothesis = [(0.0, 3.8, 0), (3.8, 6.0, 1)];
        // No collar: 0.2 s confused of 6.
        assert!(close(der(&reference, &hypothesis), 0.2 / 6.0));
        // A 0.25 s collar removes 0-0.25, 3.75-4.25 and 5.75-6 (1 s in all), the error with it.
        assert!(close(der_with_collar(&reference, &hypothesis, 0.25), 0.0));
    }

    #[test]
    fn empty_reference() {
        assert_eq!(der(&[], &[]), 0.0);
        assert_eq!(der(&[], &[(0.0, 1.0, 0)]), f64::INFINITY);
    }
}
