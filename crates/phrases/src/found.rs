//! The patterns found in the turn being scanned, each with its positions. Every pattern of the matcher
//! has a slot of 8 bytes saying whether the current turn has it and where its entry is; the entries, one
//! cache line each, are the turn's alone, side by side. A turn's pattern is then found with one read of
//! its slot, where a table of the turn's own, probed by a hash, took a multiplication, a probe and a
//! filter in front to tell the absent ones cheaply; and a slot is too small for the slots of a matcher's
//! patterns to crowd the core's caches (8,000 patterns are 64 KB), where an entry per pattern would.

use std::hint::select_unpredictable;

/// The most positions an entry holds itself; a pattern found more often in a turn has its positions in
/// `Found::spilled`.
const INLINE: usize = 14;

/// One pattern of the turn and its positions, ascending: one cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Entry {
    /// How many words of the turn match the pattern.
    count: u32,
    /// Where its positions start in `spilled` when there are more than [`INLINE`]: set by
    /// [`Found::spill`] only, [`NOT_SPILLED`] while it runs.
    spilled_at: u32,
    /// Its positions, when there are at most [`INLINE`].
    positions: [u32; INLINE],
}

const NOT_SPILLED: u32 = u32::MAX;

/// The fewest entries kept.
const MIN_ENTRIES: usize = 64;

/// The patterns of one turn and their positions ([`Found::group`]).
pub(crate) struct Found {
    /// Marks the slots of the current turn; never 0.
    pub(crate) stamp: u32,
    /// For each pattern of the matcher, the stamp of the last turn that had it, above the index of its
    /// entry in that turn ([`slot`]): 0 for a pattern no turn has had.
    slots: Vec<u64>,
    /// The entries of the current turn's patterns, in the order of their first occurrences; as many as
    /// the turn has occurrences, at least.
    entries: Vec<Entry>,
    /// The positions of the patterns found more than [`INLINE`] times in the turn, each pattern's together.
    spilled: Vec<u32>,
}

/// The slot of a pattern whose entry is the `index`th of the turn of `stamp`.
#[inline]
fn slot(stamp: u32, index: u32) -> u64 {
    (u64::from(stamp) << 32) | u64::from(index)
}

impl Found {
    /// A table for the turns of a matcher of `patterns` patterns, numbered from 0.
    pub(crate) fn new(patterns: usize) -> Self {
        Found {
            stamp: 0,
            slots: vec![0; patterns],
            entries: vec![Entry::default(); MIN_ENTRIES],
            spilled: Vec::new(),
        }
    }

    /// About how many bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
            + 8 * self.slots.capacity()
            + 4 * self.spilled.capacity()
    }

    /// The index of the entry of a pattern of the current turn, if the turn has it.
    #[inline]
    fn index_of(&self, pattern: u32) -> Option<usize> {
        let slot = *self.slots.get(pattern as usize)?;
        ((slot >> 32) as u32 == self.stamp).then_some(slot as u32 as usize)
    }

    /// Forgets the last turn and makes room for this one's `occurrences`.
    fn start(&mut self, occurrences: usize) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.fill(0);
            self.stamp = 1;
        }
        let needed = occurrences.max(MIN_ENTRIES);
        // Grown for the turn, or shrunk back after a very long one.
        if needed > self.entries.len() || self.entries.len() > (needed * 64).max(1 << 16) {
            self.entries = vec![Entry::default(); needed];
        }
    }

    /// Adds the occurrences of the turn, by ascending position (no more than [`Self::start`] made room
    /// for): each position goes into its pattern's entry, as most patterns occur once or twice in a turn;
    /// only when one occurs more often than an entry holds do two more passes gather its positions
    /// ([`Self::spill`]). Whether an occurrence is its pattern's first, which makes the next entry its
    /// own, varies from word to word: it is chosen without a branch.
    #[inline]
    fn add_all(&mut self, patterns: &[u32], positions: &[u32]) {
        let stamp = self.stamp;
        let slots = &mut self.slots[..];
        let entries = &mut self.entries[..];
        // The entry the next pattern met first takes.
        let mut next = 0;
        // The most occurrences of one pattern before the current one.
        let mut most = 0;
        for (&pattern, &position) in patterns.iter().zip(positions) {
            let held = &mut slots[pattern as usize];
            let first = (*held >> 32) as u32 != stamp;
            let index = select_unpredictable(first, next, *held as u32);
            next += u32::from(first);
            *held = slot(stamp, index);
            let entry = &mut entries[index as usize];
            let count = select_unpredictable(first, 0, entry.count);
            // Past the last inline position, the last is overwritten: the entry's positions are then
            // gathered again by `spill`.
            entry.positions[(count as usize).min(INLINE - 1)] = position;
            entry.count = count + 1;
            most = most.max(count);
        }
        if most as usize >= INLINE {
            self.spill(patterns, positions);
        }
    }

    /// Forgets the last turn and records this one's occurrences: the pattern and position of each,
    /// side by side, by ascending position. Each pattern is below the number the table was made for.
    pub(crate) fn group(&mut self, patterns: &[u32], positions: &[u32]) {
        debug_assert_eq!(patterns.len(), positions.len());
        self.start(patterns.len());
        self.add_all(patterns, positions);
    }

    /// [`Self::group`] of (pattern, position) pairs.
    #[cfg(test)]
    pub(crate) fn group_pairs(&mut self, occurrences: &[(u32, u32)]) {
        let (patterns, positions): (Vec<u32>, Vec<u32>) = occurrences.iter().copied().unzip();
        self.group(&patterns, &positions);
    }

    /// Gathers in `spilled` the positions of the patterns found more than [`INLINE`] times, from all the
    /// turn's occurrences as added: a range of their count for each such pattern, then each of its
    /// positions in turn, `positions[0]` counting where the next goes.
    #[cold]
    fn spill(&mut self, patterns: &[u32], positions: &[u32]) {
        let mut total = 0;
        // Every pattern given has its entry already.
        let index = |found: &Self, pattern| found.index_of(pattern).expect("an entry");
        for &pattern in patterns {
            let i = index(self, pattern);
            self.entries[i].spilled_at = NOT_SPILLED;
        }
        for &pattern in patterns {
            let i = index(self, pattern);
            let entry = &mut self.entries[i];
            if entry.count as usize > INLINE && entry.spilled_at == NOT_SPILLED {
                (entry.spilled_at, entry.positions[0]) = (total, total);
                total += entry.count;
            }
        }
        self.spilled.clear();
        self.spilled.resize(total as usize, 0);
        for (&pattern, &position) in patterns.iter().zip(positions) {
            let i = index(self, pattern);
            let entry = &mut self.entries[i];
            if entry.count as usize > INLINE {
                self.spilled[entry.positions[0] as usize] = position;
                entry.positions[0] += 1;
            }
        }
    }

    /// Whether a word of the turn matches the pattern.
    #[inline]
    pub(crate) fn has(&self, pattern: u32) -> bool {
        self.index_of(pattern).is_some()
    }

    /// The positions of the turn's words matching the pattern, ascending.
    #[inline]
    pub(crate) fn positions_of(&self, pattern: u32) -> &[u32] {
        let Some(i) = self.index_of(pattern) else {
            return &[];
        };
        let entry = &self.entries[i];
        if entry.count as usize <= INLINE {
            &entry.positions[..entry.count as usize]
        } else {
            let at = entry.spilled_at as usize;
            &self.spilled[at..at + entry.count as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The patterns of the matcher the tests' tables are made for.
    const PATTERNS: usize = 200_000;

    #[test]
    fn groups_positions_by_pattern_turn_after_turn() {
        let mut found = Found::new(PATTERNS);
        found.group_pairs(&[(7, 0), (3, 1), (7, 2), (9000, 2), (3, 4)]);
        assert_eq!(found.positions_of(7), [0, 2]);
        assert_eq!(found.positions_of(3), [1, 4]);
        assert_eq!(found.positions_of(9000), [2]);
        assert!(found.has(9000) && !found.has(8) && !found.has(u32::MAX));
        // A number past the matcher's patterns is not in any turn.
        assert!(!found.has(PATTERNS as u32) && found.positions_of(PATTERNS as u32).is_empty());
        // The next turn forgets the last one's patterns.
        found.group_pairs(&[(8, 0)]);
        assert_eq!(found.positions_of(8), [0]);
        assert!(found.positions_of(7).is_empty() && !found.has(3));
        // A turn with more patterns than the table had room for: it grows.
        let many: Vec<(u32, u32)> = (0..1000).map(|i| (i * 97, i)).collect();
        found.group_pairs(&many);
        assert!(found.entries.len() >= 1000);
        assert!((0..1000).all(|i| found.positions_of(i * 97) == [i]));
        assert!(!found.has(1) && !found.has(8));
        // After a very long turn, a short one gives the room back.
        let long: Vec<(u32, u32)> = (0..100_000).map(|i| (i, i)).collect();
        found.group_pairs(&long);
        assert!(found.entries.len() >= 100_000);
        found.group_pairs(&[(3, 0)]);
        assert_eq!(found.entries.len(), MIN_ENTRIES);
        assert_eq!(found.positions_of(3), [0]);
    }

    #[test]
    fn patterns_found_often_keep_all_their_positions() {
        let mut found = Found::new(PATTERNS);
        // Over 60 positions: 7 at every third (20, past what an entry holds), 3 at every fourth but
        // those (10, within it), 5 exactly as many as an entry holds, the rest once each.
        let mut occurrences = Vec::new();
        let mut fives = 0;
        for position in 0..60 {
            let pattern = if position % 3 == 0 {
                7
            } else if position % 4 == 0 {
                3
            } else if fives < INLINE {
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
            assert_eq!(found.positions_of(pattern), expected, "pattern {pattern}");
        }
        assert_eq!(found.positions_of(7).len(), 20);
        assert_eq!(found.positions_of(3).len(), 10);
        assert_eq!(found.positions_of(5).len(), INLINE);
        // The next turn, without spilling, forgets them; and one that spills again reuses the room.
        found.group_pairs(&[(7, 0), (7, 1)]);
        assert_eq!(found.positions_of(7), [0, 1]);
        assert!(!found.has(3));
        let again: Vec<(u32, u32)> = (0..20).map(|i| (3, i)).collect();
        found.group_pairs(&again);
        assert_eq!(found.positions_of(3), (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn stamps_wrap_around() {
        let mut found = Found::new(PATTERNS);
        found.group_pairs(&[(5, 0)]);
        found.stamp = u32::MAX;
        found.group_pairs(&[(6, 0)]);
        assert_eq!(found.stamp, 1);
        assert!(found.has(6) && !found.has(5));
    }
}
