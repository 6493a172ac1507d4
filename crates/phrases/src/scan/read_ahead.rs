//! Reading a call's turns ahead of their evaluation, as a pipeline of [`STAGES`] turns. The reads of a
//! scan that miss the cache form a chain (a turn's timed words, then each word's bytes, then its lexicon
//! entry, then its list), each needing the one before; the scan is mostly waits on memory otherwise. So
//! each read is asked for a turn before it is used, and arrives while other turns are worked on
//! (docs/phrases.md, How matching is fast).

use super::staged::Staged;
use crate::compile::Matcher;
use crate::lexicon::Lexicon;
use crate::turn::Turn;
use prefetch::prefetch;

/// How many turns' words are held at once: the turn evaluated, the next one (its words looked up in the
/// lexicon) and the one after (tokenized). Before turn `i` is evaluated, the timed words of turn `i + 4`
/// are asked for, the bytes of the words of turn `i + 3`, the lexicon entries of the words of turn `i + 2`
/// and the lists of the words of turn `i + 1`: the reads of a scan that miss the cache, each needing the
/// one before, are all asked for a turn ahead ([`ReadAhead::read_ahead`]).
const STAGES: usize = 3;

/// The words of the turn evaluated and of the turns after it, each a step further on the way.
#[derive(Default)]
pub(super) struct ReadAhead {
    staged: [Staged; STAGES],
}

impl ReadAhead {
    /// About how many bytes its buffers hold.
    pub(super) fn bytes(&self) -> usize {
        self.staged.iter().map(Staged::bytes).sum()
    }

    /// The words of turn `index`, looked up in the lexicon: once [`Self::read_ahead`] of the turn before
    /// it (or [`Self::read_from`] it) has run.
    #[inline]
    pub(super) fn turn(&self, index: usize) -> &Staged {
        &self.staged[index % STAGES]
    }

    /// Starts reading at turn `first`: what [`Self::read_ahead`] would have done for it and the turns
    /// after it by the time it is evaluated.
    pub(super) fn read_from(
        &mut self,
        matcher: &Matcher,
        lexicon: &mut Lexicon,
        turns: &[Turn],
        first: usize,
    ) {
        let turns_from = || turns.iter().enumerate().skip(first);
        turns_from()
            .take(4)
            .for_each(|(_, turn)| prefetch_words(turn));
        turns_from()
            .take(3)
            .for_each(|(_, turn)| prefetch_text(turn));
        for (index, turn) in turns_from().take(2) {
            self.staged[index % STAGES].tokenize(turn, matcher, lexicon);
        }
        if first < turns.len() {
            self.staged[first % STAGES].resolve(matcher, lexicon);
        }
    }

    /// Before turn `index` is evaluated, moves each turn after it one step on the way (see [`STAGES`]):
    /// each step asks for what the next one reads, which then arrives while the turns between are worked
    /// on, rather than being waited for.
    #[inline]
    pub(super) fn read_ahead(
        &mut self,
        matcher: &Matcher,
        lexicon: &mut Lexicon,
        turns: &[Turn],
        index: usize,
    ) {
        if let Some(turn) = turns.get(index + 4) {
            prefetch_words(turn);
        }
        if let Some(turn) = turns.get(index + 3) {
            prefetch_text(turn);
        }
        if let Some(turn) = turns.get(index + 2) {
            self.staged[(index + 2) % STAGES].tokenize(turn, matcher, lexicon);
        }
        if index + 1 < turns.len() {
            self.staged[(index + 1) % STAGES].resolve(matcher, lexicon);
        }
    }
}

/// Asks for a turn's timed words (where their texts are), read a turn later ([`prefetch_text`]).
fn prefetch_words(turn: &Turn) {
    if let Some(timed) = turn.words.as_deref() {
        let bytes = std::mem::size_of_val(timed);
        let first = timed.as_ptr().cast::<u8>();
        for line in (0..bytes).step_by(64) {
            prefetch(first.wrapping_add(line));
        }
    }
}

/// Asks for the bytes of a turn's words, which are tokenized two turns later: each timed word's text is
/// an allocation of its own, rarely in the cache.
fn prefetch_text(turn: &Turn) {
    match turn.words.as_deref() {
        Some(timed) if !timed.is_empty() => {
            for word in timed {
                prefetch(word.text.as_ptr());
            }
        }
        _ => {
            for line in (0..turn.text.len()).step_by(64) {
                prefetch(turn.text.as_ptr().wrapping_add(line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{MatcherBuilder, Phrase, Speaker, Turn};

    #[test]
    fn a_lexicon_replaced_within_a_call_does_not_lose_the_turns_read_ahead() {
        // A lexicon of at most 3 words, so that one is replaced every few turns, while the turns after
        // the one evaluated have already been looked up in it: they must be read again in the new one,
        // or their words would point into the lists of the old one.
        let mut builder = MatcherBuilder::new();
        builder.add(1, Phrase::parse("refund* please").unwrap(), None);
        builder.add(2, Phrase::parse("money").unwrap(), Some(Speaker::Client));
        builder.add(3, Phrase::parse("back | y2*").unwrap(), None);
        let matcher = builder.build().unwrap();
        let turns: Vec<Turn> = (0..40)
            .map(|i| {
                let speaker = [Speaker::Agent, Speaker::Client][i % 2];
                let text = match i % 4 {
                    0 => format!("w{i} refunds please w{}", i + 1),
                    1 => format!("money w{i} back"),
                    2 => format!("refund w{i} please money"),
                    _ => format!("x{i} y{i} z{i}"),
                };
                Turn::new(speaker, i as f64, i as f64 + 1.0, text)
            })
            .collect();
        let expected = matcher.scan(&turns, 40.0);
        assert!(expected.len() > 30, "{expected:?}");
        let mut scanner = matcher.scanner();
        scanner.state.lexicon = crate::lexicon::Lexicon::with_max_words(matcher.seed, 3);
        assert_eq!(scanner.scan(&turns, 40.0), expected);
        // Every turn's words were counted once, across all the lexicons.
        let mut whole = matcher.scanner();
        whole.scan(&turns, 40.0);
        assert_eq!(scanner.observed().words, whole.observed().words);
    }
}
