//! Evaluating a candidate phrase's program on the turn ([`evaluate`]): on the positions of its patterns
//! in the turn's table of patterns, not on the text, so that a phrase costs a few reads whatever the
//! length of the turn. A sequence of several patterns takes its leftmost occurrence ([`leftmost`]),
//! found backwards (which positions can still complete it) then forwards.

use super::staged::Staged;
use crate::found::Found;
use crate::numbers::Position;
use crate::program::{Program, Seq, SeqPatterns};

/// Buffers of the search for one sequence.
#[derive(Default)]
pub(super) struct Search {
    /// `reachable[i]`: the positions of pattern `i` from which the rest of the sequence can be completed
    /// (for each pattern but the last).
    reachable: Vec<Vec<Position>>,
    /// The positions of the leftmost occurrence found.
    chosen: Vec<Position>,
    /// The positions of the last pattern that can end the sequence.
    last: Vec<Position>,
}

/// The first alternative of a phrase whose every sequence occurs in the turn, as the earliest start and
/// the latest end of the words of their leftmost occurrences.
#[inline]
pub(super) fn evaluate(
    program: Program<'_>,
    words: &Staged,
    found: &Found,
    search: &mut Search,
) -> Option<(f64, f64)> {
    let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
    if let Some(pattern) = program.one_word() {
        // The most common phrase: its pattern's first position.
        return found
            .first_position(pattern)
            .map(|position| words.times(position));
    }
    // Whether a sequence of the current alternative is missing: skip to the alternative's end.
    let mut missing = false;
    for seq in program.seqs() {
        if !missing && seq.patterns.len() == 1 && !seq.starts && !seq.ends {
            // One word anywhere (most sequences): its first position.
            match found.first_position(seq.patterns.get(0)) {
                Some(position) => {
                    let (s, e) = words.times(position);
                    start = start.min(s);
                    end = end.max(e);
                }
                None => missing = true,
            }
        } else if !missing {
            if leftmost(&seq, Position::last_of(words.len()), found, search) {
                for &position in &search.chosen {
                    let (s, e) = words.times(position);
                    start = start.min(s);
                    end = end.max(e);
                }
            } else {
                missing = true;
            }
        }
        if seq.closes {
            if !missing {
                return Some((start, end));
            }
            (start, end, missing) = (f64::INFINITY, f64::NEG_INFINITY, false);
        }
    }
    None
}

/// Finds the leftmost occurrence of a sequence (smallest first position, then smallest second, ...) in a
/// turn whose last word is at `last_word`, into `search.chosen`. Works backwards first: which positions
/// of each pattern can still complete the sequence, then forwards, taking the smallest such position
/// after the previous one.
#[inline]
fn leftmost(
    seq: &Seq<SeqPatterns<'_>>,
    last_word: Position,
    found: &Found,
    search: &mut Search,
) -> bool {
    search.chosen.clear();
    let patterns = seq.patterns;
    let k = patterns.len();
    if k == 0 {
        return false;
    }
    // A pattern's position that can end a sequence with `$`: the last word, if the pattern is there.
    let at_end = |pattern| {
        found
            .positions_of(pattern)
            .last()
            .filter(|&p| p == last_word)
    };
    if k == 1 {
        let position = if seq.ends {
            at_end(patterns.get(0))
        } else {
            found.first_position(patterns.get(0))
        };
        return match position {
            Some(p) if !seq.starts || p == Position::FIRST => {
                search.chosen.push(p);
                true
            }
            _ => false,
        };
    }
    // The last pattern's positions that can end the sequence: all of them, or the last word for `$`.
    search.last.clear();
    if seq.ends {
        search.last.extend(at_end(patterns.get(k - 1)));
    } else {
        search.last.extend(found.positions_of(patterns.get(k - 1)));
    }
    let list = &search.last[..];
    if list.is_empty() {
        return false;
    }
    if k == 2 {
        // Two patterns (most sequences of several): the first position with a second one after it within
        // reach, and that second one, in one pass over both lists.
        let mut j = 0;
        for p in found.positions_of(patterns.get(0)) {
            if seq.starts && p != Position::FIRST {
                return false;
            }
            while j < list.len() && list[j] <= p {
                j += 1;
            }
            let Some(&q) = list.get(j) else {
                return false;
            };
            if q - p <= seq.within {
                search.chosen.extend([p, q]);
                return true;
            }
        }
        return false;
    }
    if search.reachable.len() < k - 1 {
        search.reachable.resize_with(k - 1, Vec::new);
    }
    for i in (0..k - 1).rev() {
        let (head, tail) = search.reachable.split_at_mut(i + 1);
        let current = &mut head[i];
        let next: &[Position] = if i + 2 == k { list } else { &tail[0] };
        current.clear();
        let mut j = 0;
        for p in found.positions_of(patterns.get(i)) {
            while j < next.len() && next[j] <= p {
                j += 1;
            }
            if j == next.len() {
                break;
            }
            if next[j] - p <= seq.within {
                current.push(p);
            }
        }
        if current.is_empty() {
            return false;
        }
    }
    let first = search.reachable[0][0];
    if seq.starts && first != Position::FIRST {
        return false;
    }
    search.chosen.push(first);
    for i in 1..k {
        let previous = search.chosen[i - 1];
        let next: &[Position] = if i + 1 == k {
            list
        } else {
            &search.reachable[i]
        };
        // Exists and is within reach: `previous` was kept because some position of `next` was.
        let at = next.partition_point(|&q| q <= previous);
        search.chosen.push(next[at]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::compile::matcher_of;
    use crate::{Speaker, Turn};

    #[test]
    fn a_pattern_found_many_times_keeps_every_position() {
        // "refund" 14 times, then once more right before "now": only that 15th position completes the
        // sequence.
        let matcher = matcher_of(&["refund now"]);
        let mut text = vec!["refund"; 14].join(" x ");
        text.push_str(" x refund now");
        let turns = [
            Turn::new(Speaker::Agent, 0.0, 1.0, text.clone()),
            Turn::new(Speaker::Agent, 1.0, 2.0, text.replace("now", "later")),
            Turn::new(Speaker::Agent, 2.0, 3.0, "refund now"),
        ];
        let mut scanner = matcher.scanner();
        let found: Vec<(usize, u32)> = scanner
            .scan(&turns, 3.0)
            .iter()
            .map(|h| (h.turn, h.phrase))
            .collect();
        assert_eq!(found, [(0, 0), (2, 0)]);
    }
}
