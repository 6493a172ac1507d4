//! Labels for segments too short to embed.
//!
//! A segment under [`MIN_SECONDS`] ("yes", "okay", a cough) has too few frames for its statistics to say
//! who spoke, and would pull a centroid astray. It is left out of the clustering and takes the label of
//! its nearest clustered segment in time (the gap between them; the earlier one on a tie): a short
//! answer usually belongs to the turn it sits in or against, and speakers rarely switch for a single word.

/// Segments shorter than this many seconds are labelled by their neighbours.
pub(crate) const MIN_SECONDS: f64 = 0.3;

/// Fills `labels[i]` for every `i` where `labels[i]` is `None` from its nearest labelled segment in time.
/// When no segment is labelled, all get 0.
pub(crate) fn fill(segments: &[(f64, f64)], labels: &[Option<u8>]) -> Vec<u8> {
    let gap = |a: (f64, f64), b: (f64, f64)| (b.0 - a.1).max(a.0 - b.1).max(0.0);
    (0..segments.len())
        .map(|i| {
            labels[i].unwrap_or_else(|| {
                let mut best: Option<(f64, u8)> = None;
                for (j, l) in labels.iter().enumerate() {
                    if let Some(l) = *l {
                        let g = gap(segments[i], segments[j]);
                        if best.is_none_or(|(bg, _)| g < bg) {
                            best = Some((g, l));
                        }
                    }
                }
                best.map_or(0, |(_, l)| l)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_segments_take_the_nearest_label() {
        let segments = [(0.0, 2.0), (2.1, 2.3), (3.0, 5.0), (5.05, 5.2), (8.0, 8.1)];
        let labels = [Some(0), None, Some(1), None, None];
        assert_eq!(fill(&segments, &labels), vec![0, 0, 1, 1, 1]);
    }

    #[test]
    fn a_tie_goes_to_the_earlier_segment_and_nothing_labelled_gives_zero() {
        let segments = [(0.0, 1.0), (1.5, 1.6), (2.1, 3.0)];
        assert_eq!(fill(&segments, &[Some(1), None, Some(0)]), vec![1, 1, 0]);
        assert_eq!(fill(&segments, &[None, None, None]), vec![0, 0, 0]);
    }
}
