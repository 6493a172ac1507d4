//! The patterns found in the turn being scanned, each with its positions: a table of open addressing the
//! size of the turn, rebuilt for each turn, small enough to stay in the core's fastest cache. A table per
//! pattern of the matcher would be larger than that cache and cost a miss for each pattern a turn has.

use std::hint::select_unpredictable;

use crate::hash::Seed;

/// The most positions an entry holds itself; a pattern found more often in a turn has its positions in
/// `Found::spilled`.
const INLINE: usize = 12;

/// One pattern of the turn and its positions, ascending: one cache line (64 bytes).
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// The table's stamp when the entry is the current turn's, above its pattern ([`key`]).
    key: u64,
    /// How many words of the turn match the pattern.
    count: u32,
    /// Where its positions start in `spilled` when there are more than [`INLINE`]: set by
    /// [`Found::spill`] only, [`NOT_SPILLED`] while it runs.
    spilled_at: u32,
    /// Its positions, when there are at most [`INLINE`].
    positions: [u32; INLINE],
}

const NOT_SPILLED: u32 = u32::MAX;

/// How many marks the set of patterns present has.
const PRESENT: usize = 2048;
/// The fewest entries of the table.
const MIN_ENTRIES: usize = 64;

/// The patterns of one turn and their positions ([`Found::group`]).
pub(crate) struct Found {
    /// Marks the entries of the current turn; never 0.
    pub(crate) stamp: u32,
    entries: Vec<Entry>,
    /// A pattern's first entry is the top bits of its product with `multiplier`.
    multiplier: u64,
    shift: u32,
    /// The positions of the patterns found more than [`INLINE`] times in the turn, each pattern's together.
    spilled: Vec<u32>,
    /// `present[p % PRESENT]` is `present_stamp` for each pattern `p` found: a set that fits in a few
    /// cache lines, so that the many triggers whose second pattern is absent are told so without a probe
    /// of the table. A mark per byte, where a bit per pattern took a shift and a mask more on each side.
    present: Box<[u8; PRESENT]>,
    /// Marks the patterns present in the current turn; never 0.
    present_stamp: u8,
}

/// Where the probe for a pattern starts: the top bits of its product with the table's multiplier.
#[inline]
fn first_entry(pattern: u32, multiplier: u64, shift: u32) -> usize {
    (u64::from(pattern).wrapping_mul(multiplier) >> shift) as usize
}

/// The key of a pattern's entry in the turn of `stamp`.
#[inline]
fn key(stamp: u32, pattern: u32) -> u64 {
    (u64::from(stamp) << 32) | u64::from(pattern)
}

/// Whether an entry holds a pattern of the turn of its key's stamp other than its key's: its key differs
/// from it in the pattern bits only, which is one comparison.
#[inline]
fn taken_by_other(entry: &Entry, key: u64) -> bool {
    (entry.key ^ key).wrapping_sub(1) < u64::from(u32::MAX)
}

impl Found {
    pub(crate) fn new(seed: Seed) -> Self {
        Found {
            stamp: 0,
            entries: vec![Entry::default(); MIN_ENTRIES],
            multiplier: seed.multiplier(),
            shift: 64 - MIN_ENTRIES.trailing_zeros(),
            spilled: Vec::new(),
            present: Box::new([0; PRESENT]),
            present_stamp: 0,
        }
    }

    /// About how many bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>() + 4 * self.spilled.capacity()
    }

    #[inline]
    fn first_entry(&self, pattern: u32) -> usize {
        first_entry(pattern, self.multiplier, self.shift)
    }

    /// The index of the entry of a pattern of the current turn.
    #[inline]
    fn index_of(&self, pattern: u32) -> usize {
        let mask = self.entries.len() - 1;
        let mut i = self.first_entry(pattern);
        while self.entries[i].key != key(self.stamp, pattern) {
            i = (i + 1) & mask;
        }
        i
    }

    /// Forgets the last turn and makes room for this one's `occurrences`.
    fn start(&mut self, occurrences: usize) {
        self.present_stamp = self.present_stamp.wrapping_add(1);
        if self.present_stamp == 0 {
            self.present.fill(0);
            self.present_stamp = 1;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.entries.iter_mut().for_each(|entry| entry.key = 0);
            self.stamp = 1;
        }
        // At most half full, so that a probe ends soon.
        let needed = (occurrences * 2).next_power_of_two().max(MIN_ENTRIES);
        // Grown for the turn, or shrunk back after a very long one.
        if needed > self.entries.len() || self.entries.len() > (needed * 64).max(1 << 16) {
            self.entries = vec![Entry::default(); needed];
            self.shift = 64 - needed.trailing_zeros();
        }
    }

    /// Adds the occurrences of the turn, by ascending position (no more than [`Self::start`] made room
    /// for): each position goes into its pattern's entry, as most patterns occur once or twice in a turn;
    /// only when one occurs more often than an entry holds do two more passes gather its positions
    /// ([`Self::spill`]). Whether an occurrence is its pattern's first, which makes the entry, varies
    /// from word to word: it is chosen without a branch.
    #[inline]
    fn add_all(&mut self, patterns: &[u32], positions: &[u32]) {
        let mask = self.entries.len() - 1;
        let (stamp, multiplier, shift) = (self.stamp, self.multiplier, self.shift);
        let entries = &mut self.entries[..];
        let (present, present_stamp) = (&mut *self.present, self.present_stamp);
        // The most occurrences of one pattern before the current one.
        let mut most = 0;
        for (&pattern, &position) in patterns.iter().zip(positions) {
            let key = key(stamp, pattern);
            let mut i = first_entry(pattern, multiplier, shift);
            // Past the entries of the turn's other patterns (few: the table is at most half full).
            while taken_by_other(&entries[i], key) {
                i = (i + 1) & mask;
            }
            let entry = &mut entries[i];
            let count = select_unpredictable(entry.key != key, 0, entry.count);
            entry.key = key;
            // Past the last inline position, the last is overwritten: the entry's positions are then
            // gathered again by `spill`.
            entry.positions[(count as usize).min(INLINE - 1)] = position;
            entry.count = count + 1;
            most = most.max(count);
            present[pattern as usize % PRESENT] = present_stamp;
        }
        if most as usize >= INLINE {
            self.spill(patterns, positions);
        }
    }

    /// Forgets the last turn and records this one's occurrences: the pattern and position of each,
    /// side by side, by ascending position.
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
        for &pattern in patterns {
            let i = self.index_of(pattern);
            self.entries[i].spilled_at = NOT_SPILLED;
        }
        for &pattern in patterns {
            let i = self.index_of(pattern);
            let entry = &mut self.entries[i];
            if entry.count as usize > INLINE && entry.spilled_at == NOT_SPILLED {
                (entry.spilled_at, entry.positions[0]) = (total, total);
                total += entry.count;
            }
        }
        self.spilled.clear();
        self.spilled.resize(total as usize, 0);
        for (&pattern, &position) in patterns.iter().zip(positions) {
            let i = self.index_of(pattern);
            let entry = &mut self.entries[i];
            if entry.count as usize > INLINE {
                self.spilled[entry.positions[0] as usize] = position;
                entry.positions[0] += 1;
            }
        }
    }

    /// False when no word of the turn matches the pattern; true when one may.
    #[inline]
    pub(crate) fn may_have(&self, pattern: u32) -> bool {
        self.present[pattern as usize % PRESENT] == self.present_stamp
    }

    #[inline]
    fn entry(&self, pattern: u32) -> Option<&Entry> {
        if !self.may_have(pattern) {
            return None;
        }
        let mask = self.entries.len() - 1;
        let mut i = self.first_entry(pattern);
        loop {
            let entry = &self.entries[i];
            if entry.key == key(self.stamp, pattern) {
                return Some(entry);
            }
            if entry.key >> 32 != u64::from(self.stamp) {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether a word of the turn matches the pattern.
    #[inline]
    pub(crate) fn has(&self, pattern: u32) -> bool {
        self.entry(pattern).is_some()
    }

    /// The positions of the turn's words matching the pattern, ascending.
    #[inline]
    pub(crate) fn positions_of(&self, pattern: u32) -> &[u32] {
        match self.entry(pattern) {
            Some(entry) if entry.count as usize <= INLINE => {
                &entry.positions[..entry.count as usize]
            }
            Some(entry) => {
                let at = entry.spilled_at as usize;
                &self.spilled[at..at + entry.count as usize]
            }
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_positions_by_pattern_turn_after_turn() {
        let mut found = Found::new(Seed::random());
        found.group_pairs(&[(7, 0), (3, 1), (7, 2), (9000, 2), (3, 4)]);
        assert_eq!(found.positions_of(7), [0, 2]);
        assert_eq!(found.positions_of(3), [1, 4]);
        assert_eq!(found.positions_of(9000), [2]);
        assert!(found.has(9000) && !found.has(8) && !found.has(u32::MAX));
        // The next turn forgets the last one's patterns.
        found.group_pairs(&[(8, 0)]);
        assert_eq!(found.positions_of(8), [0]);
        assert!(found.positions_of(7).is_empty() && !found.has(3));
        // A turn with more patterns than the table had room for: it grows.
        let many: Vec<(u32, u32)> = (0..1000).map(|i| (i * 2048, i)).collect();
        found.group_pairs(&many);
        assert!(found.entries.len() >= 2000);
        assert!((0..1000).all(|i| found.positions_of(i * 2048) == [i]));
        assert!(!found.has(1) && !found.has(8));
        // After a very long turn, a short one gives the room back.
        let long: Vec<(u32, u32)> = (0..100_000).map(|i| (i, i)).collect();
        found.group_pairs(&long);
        assert!(found.entries.len() >= 200_000);
        found.group_pairs(&[(3, 0)]);
        assert_eq!(found.entries.len(), MIN_ENTRIES);
        assert_eq!(found.positions_of(3), [0]);
    }

    #[test]
    fn patterns_found_often_keep_all_their_positions() {
        let mut found = Found::new(Seed::random());
        // Over 40 positions: 7 at every third (14, past what an entry holds), 3 at every fourth but
        // those (7, within it), 5 exactly as many as an entry holds, the rest once each.
        let mut occurrences = Vec::new();
        let mut fives = 0;
        for position in 0..40 {
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
        for pattern in [7, 3, 5, 139] {
            let expected: Vec<u32> = occurrences
                .iter()
                .filter(|(p, _)| *p == pattern)
                .map(|(_, position)| *position)
                .collect();
            assert_eq!(found.positions_of(pattern), expected, "pattern {pattern}");
        }
        assert_eq!(found.positions_of(7).len(), 14);
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
        let mut found = Found::new(Seed::random());
        found.group_pairs(&[(5, 0)]);
        found.stamp = u32::MAX;
        found.group_pairs(&[(6, 0)]);
        assert_eq!(found.stamp, 1);
        assert!(found.has(6) && !found.has(5));
    }

    #[test]
    fn the_set_of_patterns_present_forgets_them_when_its_stamp_wraps_around() {
        let mut found = Found::new(Seed::random());
        found.group_pairs(&[(5, 0)]);
        let mark = found.present_stamp;
        assert!(found.may_have(5) && !found.may_have(6));
        // 255 turns later the stamp is the one that marked pattern 5 again: the marks must be gone.
        for turn in 0..255 {
            found.group_pairs(&[(6, turn)]);
        }
        assert_eq!(found.present_stamp, mark);
        assert!(found.may_have(6) && !found.may_have(5));
        assert!(!found.has(5));
        // A pattern sharing its mark with another is only maybe present; the table tells.
        let alias = 6 + PRESENT as u32;
        assert!(found.may_have(alias) && !found.has(alias));
    }
}
