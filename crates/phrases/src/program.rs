//! A phrase as the scan evaluates it: a few numbers in one array shared by all the phrases of a matcher,
//! its id, time windows and sequences back to back, so that evaluating a phrase usually reads one cache
//! line where separate tables of phrases, sequences and patterns cost one miss each (docs/phrases.md, How
//! matching is fast).
//!
//! Layout, in `u32`s from the phrase's offset: its id; its index among the matcher's phrases, with
//! [`START_WINDOW`] and [`END_WINDOW`] set for the time windows it has; its length; when it has a window,
//! the bits of `~s<T` and of `~e<T` (two `u32`s each, 0 for a missing one); then each sequence: a header
//! (the number of patterns, and the flags [`STARTS`], [`ENDS`] and [`CLOSES`]), its `~N`, and its
//! patterns.

use crate::error::TooLarge;
use crate::numbers::{PatternId, ProgramOffset};

/// Set in the second number when the phrase has `~s<T`, and `~e<T`.
const START_WINDOW: u32 = 1 << 31;
const END_WINDOW: u32 = 1 << 30;
const WINDOWS: u32 = START_WINDOW | END_WINDOW;
/// Set in the second number when the phrase is one word pattern anywhere in the turn (one alternative of
/// one sequence of one pattern, without `^` or `$`): its last number is that pattern.
const ONE_WORD: u32 = 1 << 29;
/// A sequence's flags, in its header above its number of patterns.
const STARTS: u32 = 1 << 24;
const ENDS: u32 = 1 << 25;
/// The last sequence of its alternative.
const CLOSES: u32 = 1 << 26;
const COUNT: u32 = (1 << 24) - 1;

/// Appends a phrase's program to `out`.
pub(crate) fn write<'a>(
    out: &mut Vec<u32>,
    id: u32,
    index: u32,
    windows: (Option<f64>, Option<f64>),
    seqs: impl IntoIterator<Item = Seq<&'a [PatternId]>>,
) -> Result<(), TooLarge> {
    if index >= ONE_WORD {
        return Err(TooLarge::new("more than 2^29 phrases"));
    }
    let at = out.len();
    let flags = match windows {
        (None, None) => 0,
        (Some(_), None) => START_WINDOW,
        (None, Some(_)) => END_WINDOW,
        (Some(_), Some(_)) => WINDOWS,
    };
    out.extend([id, index | flags, 0]);
    if flags != 0 {
        for window in [windows.0, windows.1] {
            let bits = window.unwrap_or(0.0).to_bits();
            out.extend([bits as u32, (bits >> 32) as u32]);
        }
    }
    let first_seq = out.len();
    for seq in seqs {
        let count = u32::try_from(seq.patterns.len())
            .ok()
            .filter(|&n| n <= COUNT)
            .ok_or(TooLarge::new("a sequence of 2^24 patterns or more"))?;
        let flags = [(seq.starts, STARTS), (seq.ends, ENDS), (seq.closes, CLOSES)]
            .iter()
            .filter(|(set, _)| *set)
            .fold(0, |all, (_, flag)| all | flag);
        out.extend([count | flags, seq.within]);
        out.extend(seq.patterns.iter().map(|pattern| pattern.number()));
    }
    out[at + 2] = (out.len() - at) as u32;
    if out.len() == first_seq + 3 && out[first_seq] == (1 | CLOSES) {
        out[at + 1] |= ONE_WORD;
    }
    Ok(())
}

/// A phrase's program, read from its offset.
#[derive(Clone, Copy)]
pub(crate) struct Program<'a> {
    words: &'a [u32],
}

impl<'a> Program<'a> {
    /// The program at `offset` of the matcher's array.
    #[inline]
    pub(crate) fn at(all: &'a [u32], offset: ProgramOffset) -> Self {
        let offset = offset.index();
        let length = all[offset + 2] as usize;
        Program {
            words: &all[offset..offset + length],
        }
    }

    pub(crate) fn id(self) -> u32 {
        self.words[0]
    }

    /// Its index among the matcher's phrases.
    #[cfg(test)]
    pub(crate) fn index(self) -> u32 {
        self.words[1] & !(WINDOWS | ONE_WORD)
    }

    /// The pattern of a phrase that is one word pattern anywhere in the turn.
    #[inline]
    pub(crate) fn one_word(self) -> Option<PatternId> {
        (self.words[1] & ONE_WORD != 0).then(|| PatternId::new(self.words[self.words.len() - 1]))
    }

    fn f64_at(self, at: usize) -> f64 {
        f64::from_bits(u64::from(self.words[at]) | (u64::from(self.words[at + 1]) << 32))
    }

    /// Whether a turn starting at `start` in a call of `duration` seconds is inside the phrase's windows:
    /// `~s<T` starts before T, `~e<T` starts at or after the duration minus T.
    #[inline]
    pub(crate) fn in_windows(self, start: f64, duration: f64) -> bool {
        let flags = self.words[1];
        flags & WINDOWS == 0
            || ((flags & START_WINDOW == 0 || start < self.f64_at(3))
                && (flags & END_WINDOW == 0 || start >= duration - self.f64_at(5)))
    }

    /// Its sequences, in textual order.
    #[inline]
    pub(crate) fn seqs(self) -> Seqs<'a> {
        let first = if self.words[1] & WINDOWS == 0 { 3 } else { 7 };
        Seqs {
            words: &self.words[first..],
        }
    }
}

/// The sequences of a program.
pub(crate) struct Seqs<'a> {
    words: &'a [u32],
}

/// One sequence of a program: its `^`, its `$`, whether it is the last of its alternative, its `~N`, and
/// its patterns, `P`: a slice of them as written ([`write`]), a [`SeqPatterns`] as read
/// ([`Program::seqs`]).
pub(crate) struct Seq<P> {
    pub(crate) starts: bool,
    pub(crate) ends: bool,
    pub(crate) closes: bool,
    pub(crate) within: u32,
    pub(crate) patterns: P,
}

/// The patterns of a sequence where its program holds them, among numbers of other kinds.
#[derive(Clone, Copy)]
pub(crate) struct SeqPatterns<'a>(&'a [u32]);

impl SeqPatterns<'_> {
    #[inline]
    pub(crate) fn len(self) -> usize {
        self.0.len()
    }

    /// The `i`th pattern of the sequence.
    #[inline]
    pub(crate) fn get(self, i: usize) -> PatternId {
        PatternId::new(self.0[i])
    }

    /// Its patterns, in order.
    #[cfg(test)]
    pub(crate) fn to_vec(self) -> Vec<PatternId> {
        self.0.iter().copied().map(PatternId::new).collect()
    }
}

impl<'a> Iterator for Seqs<'a> {
    type Item = Seq<SeqPatterns<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&header, rest) = self.words.split_first()?;
        let (&within, rest) = rest.split_first()?;
        let (patterns, rest) = rest.split_at((header & COUNT) as usize);
        self.words = rest;
        Some(Seq {
            starts: header & STARTS != 0,
            ends: header & ENDS != 0,
            closes: header & CLOSES != 0,
            within,
            patterns: SeqPatterns(patterns),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern ids of numbers.
    fn ids(numbers: &[u32]) -> Vec<PatternId> {
        numbers.iter().copied().map(PatternId::new).collect()
    }

    #[test]
    fn a_program_reads_back_what_was_written() {
        let mut all = vec![7, 7];
        write(&mut all, 42, 3, (None, None), []).unwrap();
        let with_windows = ProgramOffset::new(all.len() as u32);
        write(
            &mut all,
            9,
            4,
            (Some(30.0), None),
            [
                Seq {
                    starts: true,
                    ends: false,
                    closes: false,
                    within: 1,
                    patterns: &ids(&[5, 6])[..],
                },
                Seq {
                    starts: false,
                    ends: true,
                    closes: true,
                    within: 3,
                    patterns: &ids(&[8])[..],
                },
            ],
        )
        .unwrap();
        let empty = Program::at(&all, ProgramOffset::new(2));
        assert_eq!(
            (empty.id(), empty.index(), empty.seqs().count()),
            (42, 3, 0)
        );
        assert!(empty.in_windows(1e9, 0.0));
        let p = Program::at(&all, with_windows);
        assert_eq!((p.id(), p.index()), (9, 4));
        // ~s<30 only: starts before 30 s, whatever the call's duration.
        assert!(p.in_windows(29.9, 1000.0));
        assert!(!p.in_windows(30.0, 40.0));
        let mut end = Vec::new();
        write(&mut end, 1, 0, (None, Some(60.0)), []).unwrap();
        let e = Program::at(&end, ProgramOffset::new(0));
        assert!(e.in_windows(40.0, 100.0) && !e.in_windows(39.9, 100.0));
        assert!(e.in_windows(0.0, 50.0));
        assert_eq!((empty.one_word(), p.one_word()), (None, None));
        // One word pattern anywhere, with or without windows; anchored, or one of two, it is not.
        let (eight, nine) = (ids(&[8]), ids(&[9]));
        let one = |starts: bool, windows: (Option<f64>, Option<f64>), closes: bool| {
            let mut out = vec![0];
            let seq = |patterns, closes: bool| Seq {
                starts,
                ends: false,
                closes,
                within: 1,
                patterns,
            };
            let mut seqs = vec![seq(&eight[..], closes)];
            if !closes {
                seqs.push(seq(&nine[..], true));
            }
            write(&mut out, 5, 6, windows, seqs).unwrap();
            let program = Program::at(&out, ProgramOffset::new(1));
            assert_eq!(program.index(), 6);
            program.one_word().map(PatternId::number)
        };
        assert_eq!(one(false, (None, None), true), Some(8));
        assert_eq!(one(false, (Some(3.0), Some(4.0)), true), Some(8));
        assert_eq!(one(true, (None, None), true), None);
        assert_eq!(one(false, (None, None), false), None);
        let seqs: Vec<_> = p
            .seqs()
            .map(|s| (s.starts, s.ends, s.closes, s.within, s.patterns.to_vec()))
            .collect();
        assert_eq!(
            seqs,
            [
                (true, false, false, 1, ids(&[5, 6])),
                (false, true, true, 3, ids(&[8]))
            ]
        );
    }

    #[test]
    fn numbers_that_would_overflow_their_bits_are_an_error() {
        let mut out = Vec::new();
        let too_many = write(&mut out, 1, ONE_WORD, (None, None), []);
        assert_eq!(
            too_many.unwrap_err().to_string(),
            "too many phrases for one matcher: more than 2^29 phrases"
        );
        let patterns = vec![PatternId::default(); COUNT as usize + 1];
        let seq = Seq {
            starts: false,
            ends: false,
            closes: true,
            within: 1,
            patterns: &patterns[..],
        };
        let too_long = write(&mut out, 1, 0, (None, None), [seq]);
        assert_eq!(
            too_long.unwrap_err().to_string(),
            "too many phrases for one matcher: a sequence of 2^24 patterns or more"
        );
    }
}
