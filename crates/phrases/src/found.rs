//! The patterns found in the turn being scanned, each with its positions. Every pattern of the matcher
//! has a slot of 8 bytes saying whether the current turn has it and where its first occurrence is; each
//! occurrence links to the next of its pattern. A turn's pattern is then found with one read of its slot,
//! and recording an occurrence is one read and two writes, the same for every occurrence, where an entry
//! per pattern of the turn took a choice between making one and adding to it, a cache line written per
//! pattern, and a second pass for a pattern found more often than an entry held. A slot is small enough
//! for the slots of a matcher's patterns not to crowd the core's caches (8,000 patterns are 64 KB).

use std::hint::select_unpredictable;

use crate::numbers::{PatternId, Position};

/// The link of the last occurrence of a pattern in a turn.
const END: u32 = u32::MAX;

/// One occurrence of a pattern of the turn: the word's position and the index of the pattern's next
/// occurrence ([`END`] for none).
#[derive(Debug, Clone, Copy, Default)]
struct Link {
    position: Position,
    next: u32,
}

/// The fewest links kept.
const MIN_LINKS: usize = 64;

/// The patterns of one turn and their positions ([`Found::group`]).
pub(crate) struct Found {
    /// Marks the slots of the current turn; never 0.
    pub(crate) stamp: u32,
    /// For each pattern of the matcher, the stamp of the last turn that had it, above the index of its
    /// first occurrence in that turn ([`slot`]): 0 for a pattern no turn has had.
    slots: Vec<u64>,
    /// The occurrences of the current turn, as given to [`Found::group`]; at least as many.
    links: Vec<Link>,
}

/// The slot of a pattern whose first occurrence is the `index`th of the turn of `stamp`.
#[inline]
fn slot(stamp: u32, index: u32) -> u64 {
    (u64::from(stamp) << 32) | u64::from(index)
}

/// The positions of one pattern in the turn, ascending ([`Found::positions_of`]).
#[derive(Clone)]
pub(crate) struct Positions<'a> {
    links: &'a [Link],
    at: u32,
}

impl Iterator for Positions<'_> {
    type Item = Position;

    #[inline]
    fn next(&mut self) -> Option<Position> {
        let link = self.links.get(self.at as usize)?;
        self.at = link.next;
        Some(link.position)
    }
}

impl Found {
    /// A table for the turns of a matcher of `patterns` patterns, numbered from 0.
    pub(crate) fn new(patterns: usize) -> Self {
        Found {
            stamp: 0,
            slots: vec![0; patterns],
            links: vec![Link::default(); MIN_LINKS],
        }
    }

    /// About how many bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.links.capacity() * std::mem::size_of::<Link>() + 8 * self.slots.capacity()
    }

    /// The index of the first occurrence of a pattern of the current turn, if the turn has it.
    #[inline]
    fn first_of(&self, pattern: PatternId) -> Option<u32> {
        let slot = *self.slots.get(pattern.index())?;
        ((slot >> 32) as u32 == self.stamp).then_some(slot as u32)
    }

    /// Forgets the last turn and makes room for this one's `occurrences`.
    fn start(&mut self, occurrences: usize) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.fill(0);
            self.stamp = 1;
        }
        let needed = occurrences.max(MIN_LINKS);
        // Grown for the turn, or shrunk back after a very long one.
        if needed > self.links.len() || self.links.len() > (needed * 64).max(1 << 16) {
            self.links = vec![Link::default(); needed];
        }
    }

    /// Forgets the last turn and records this one's occurrences: the pattern and position of each, side
    /// by side, by ascending position, a pattern at most once per position. Each pattern is below the
    /// number the table was made for. They are linked from the last to the first, so that each one's
    /// next is the one its pattern's slot names already (when the slot is of this turn): whether an
    /// occurrence is its pattern's last, which varies from word to word, is chosen without a branch.
    pub(crate) fn group(&mut self, patterns: &[PatternId], positions: &[Position]) {
        debug_assert_eq!(patterns.len(), positions.len());
        let count = patterns.len().min(positions.len());
        self.start(count);
        let stamp = self.stamp;
        let slots = &mut self.slots[..];
        let occurrences = self.links[..count]
            .iter_mut()
            .zip(patterns.iter().zip(positions))
            .enumerate()
            .rev();
        for (index, (link, (&pattern, &position))) in occurrences {
            let held = &mut slots[pattern.index()];
            let later = (*held >> 32) as u32 == stamp;
            *link = Link {
                position,
                next: select_unpredictable(later, *held as u32, END),
            };
            *held = slot(stamp, index as u32);
        }
    }

    /// [`Self::group`] of (pattern, position) pairs, as numbers.
    #[cfg(test)]
    pub(crate) fn group_pairs(&mut self, occurrences: &[(u32, u32)]) {
        let (patterns, positions): (Vec<PatternId>, Vec<Position>) = occurrences
            .iter()
            .map(|&(pattern, position)| (PatternId::new(pattern), Position::new(position)))
            .unzip();
        self.group(&patterns, &positions);
    }

    /// Whether a word of the turn matches the pattern.
    #[inline]
    pub(crate) fn has(&self, pattern: PatternId) -> bool {
        self.first_of(pattern).is_some()
    }

    /// The position of the first word of the turn matching the pattern.
    #[inline]
    pub(crate) fn first_position(&self, pattern: PatternId) -> Option<Position> {
        let index = self.first_of(pattern)?;
        Some(self.links.get(index as usize)?.position)
    }

    /// The positions of the turn's words matching the pattern, ascending.
    #[inline]
    pub(crate) fn positions_of(&self, pattern: PatternId) -> Positions<'_> {
        Positions {
            links: &self.links,
            at: self.first_of(pattern).unwrap_or(END),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The patterns of the matcher the tests' tables are made for.
    const PATTERNS: usize = 200_000;

    fn positions(found: &Found, pattern: u32) -> Vec<u32> {
        found
            .positions_of(PatternId::new(pattern))
            .map(Position::number)
            .collect()
    }

    fn has(found: &Found, pattern: u32) -> bool {
        found.has(PatternId::new(pattern))
    }

    fn first_position(found: &Found, pattern: u32) -> Option<u32> {
        found
            .first_position(PatternId::new(pattern))
            .map(Position::number)
    }

    #[test]
    fn groups_positions_by_pattern_turn_after_turn() {
        let mut found = Found::new(PATTERNS);
        found.group_pairs(&[(7, 0), (3, 1), (7, 2), (9000, 2), (3, 4)]);
        assert_eq!(positions(&found, 7), [0, 2]);
        assert_eq!(positions(&found, 3), [1, 4]);
        assert_eq!(positions(&found, 9000), [2]);
        assert_eq!(first_position(&found, 3), Some(1));
        assert!(has(&found, 9000) && !has(&found, 8) && !has(&found, u32::MAX));
        // A number past the matcher's patterns is not in any turn.
        assert!(!has(&found, PATTERNS as u32) && positions(&found, PATTERNS as u32).is_empty());
        assert_eq!(first_position(&found, PATTERNS as u32), None);
        // The next turn forgets the last one's patterns.
        found.group_pairs(&[(8, 0)]);
        assert_eq!(positions(&found, 8), [0]);
        assert!(positions(&found, 7).is_empty() && !has(&found, 3));
        assert_eq!(first_position(&found, 7), None);
        // A turn with more patterns than the table had room for: it grows.
        let many: Vec<(u32, u32)> = (0..1000).map(|i| (i * 97, i)).collect();
        found.group_pairs(&many);
        assert!(found.links.len() >= 1000);
        assert!((0..1000).all(|i| positions(&found, i * 97) == [i]));
        assert!(!has(&found, 1) && !has(&found, 8));
        // After a very long turn, a short one gives the room back.
        let long: Vec<(u32, u32)> = (0..100_000).map(|i| (i, i)).collect();
        found.group_pairs(&long);
        assert!(found.links.len() >= 100_000);
        found.group_pairs(&[(3, 0)]);
        assert_eq!(found.links.len(), MIN_LINKS);
        assert_eq!(positions(&found, 3), [0]);
    }

    #[test]
    fn patterns_found_often_keep_all_their_positions() {
        let mut found = Found::new(PATTERNS);
        // Over 60 positions: 7 at every third, 3 at every fourth but those, 5 at the next 14, the rest
        // once each.
        let mut occurrences = Vec::new();
        let mut fives = 0;
        for position in 0..60 {
            let pattern = if position % 3 == 0 {
                7
            } else if position % 4 == 0 {
                3
            } else if fives < 14 {
                fives += 1;
                5
            } else {
                100 + position
            };
            occurrences.push((pattern, position));
        }
        found.group_pairs(&occurrences);
        for pattern in [7, 3, 5, 159, 160] {
            let expected: Vec<u32> = occurrences
                .iter()
                .filter(|(p, _)| *p == pattern)
                .map(|(_, position)| *position)
                .collect();
            assert_eq!(positions(&found, pattern), expected, "pattern {pattern}");
        }
        assert_eq!(positions(&found, 7).len(), 20);
        assert_eq!(positions(&found, 3).len(), 10);
        assert_eq!(positions(&found, 5).len(), 14);
        // The next turn forgets them.
        found.group_pairs(&[(7, 0), (7, 1)]);
        assert_eq!(positions(&found, 7), [0, 1]);
        assert!(!has(&found, 3));
        let again: Vec<(u32, u32)> = (0..20).map(|i| (3, i)).collect();
        found.group_pairs(&again);
        assert_eq!(positions(&found, 3), (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn several_patterns_at_one_position() {
        let mut found = Found::new(PATTERNS);
        found.group_pairs(&[(1, 0), (2, 0), (1, 3), (2, 3), (4, 3)]);
        assert_eq!(positions(&found, 1), [0, 3]);
        assert_eq!(positions(&found, 2), [0, 3]);
        assert_eq!(positions(&found, 4), [3]);
    }

    #[test]
    fn stamps_wrap_around() {
        let mut found = Found::new(PATTERNS);
        found.group_pairs(&[(5, 0)]);
        found.stamp = u32::MAX;
        found.group_pairs(&[(6, 0)]);
        assert_eq!(found.stamp, 1);
        assert!(has(&found, 6) && !has(&found, 5));
    }
}
