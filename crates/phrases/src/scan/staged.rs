//! The words of a turn read ahead of its evaluation ([`Staged`]), in two steps a turn apart: tokenized into
//! keys (and their lexicon entries asked for), then looked up in the lexicon (and their lists asked for).
//! A word's key and times sit side by side, so that each word tokenized is one push, and a word's key is
//! replaced in place by its place in the lexicon once looked up.

use crate::compile::Matcher;
use crate::lexicon::{Lexicon, Place};
use crate::normalize::{ascii_token, normalize_into, split_whitespace, Token};
use crate::numbers::Position;
use crate::turn::Turn;

/// The last byte of a key that holds a word's lexicon place rather than the word (an inline key's last
/// byte is the word's length, at most 15).
const RESOLVED: u128 = 0xFF;

/// What a staged word is known by: its inline key (see `hash::inline_key`) once tokenized, or its place
/// in the lexicon once looked up ([`Staged::resolve`]), or as it is tokenized for a word too long to be
/// an inline key.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(super) struct WordKey(u128);

impl WordKey {
    /// The key holding a word's place in the lexicon.
    #[inline]
    fn resolved(place: Place) -> Self {
        WordKey((RESOLVED << 120) | u128::from(place.to_bits()))
    }

    /// Its inline key, when it has not been looked up yet.
    #[inline]
    fn unresolved(self) -> Option<u128> {
        (self.0 >> 120 != RESOLVED).then_some(self.0)
    }

    /// The place in the lexicon of a word looked up.
    #[inline]
    pub(super) fn place(self) -> Place {
        Place::from_bits(self.0 as u64)
    }
}

/// One word of a turn read ahead of its evaluation.
#[derive(Clone, Copy)]
pub(super) struct Word {
    pub(super) key: WordKey,
    /// The hash of its inline key, from asking for its entry to looking it up.
    hash: u64,
    /// Its own times when the turn has timed words, the turn's otherwise.
    start: f64,
    end: f64,
}

/// The words of a turn read ahead of its evaluation, by position.
#[derive(Default)]
pub(super) struct Staged {
    pub(super) words: Vec<Word>,
    /// How many (pattern, position) pairs its words make, once they are looked up.
    pub(super) occurrences: usize,
}

impl Staged {
    /// About how many bytes its buffers hold.
    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of::<Word>() * self.words.capacity()
    }

    /// How many words it holds.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.words.len()
    }

    /// The start and end of the word at `position`.
    #[inline]
    pub(super) fn times(&self, position: Position) -> (f64, f64) {
        let word = &self.words[position.index()];
        (word.start, word.end)
    }

    /// Tokenizes a turn into its keys, in place of the turn staged before, and asks for the lexicon's
    /// entries of those keys, which are read a turn later ([`Self::resolve`]). A timed word or a token
    /// that is ASCII, one word and short (nearly all of them) goes from its bytes to its key in one step.
    pub(super) fn tokenize(&mut self, turn: &Turn, matcher: &Matcher, lexicon: &mut Lexicon) {
        let words = &mut self.words;
        words.clear();
        // A word whose key is still its bytes has its entry asked for as it is staged; a long word's
        // place is known already.
        let mut stage = |lexicon: &Lexicon, key: WordKey, start: f64, end: f64| {
            let hash = key.unresolved().map_or(0, |key| lexicon.prefetch(key));
            words.push(Word {
                key,
                hash,
                start,
                end,
            });
        };
        match turn.words.as_deref() {
            Some(timed) if !timed.is_empty() => {
                for word in timed {
                    match ascii_token(word.text.as_bytes()) {
                        Token::Inline(key) => stage(lexicon, WordKey(key), word.start, word.end),
                        Token::Empty => {}
                        Token::Other => {
                            for token in split_whitespace(&word.text) {
                                if let Some(key) = key_of(token, matcher, lexicon) {
                                    stage(lexicon, key, word.start, word.end);
                                }
                            }
                        }
                    }
                }
            }
            _ => {
                for token in split_whitespace(&turn.text) {
                    if let Some(key) = key_of(token, matcher, lexicon) {
                        stage(lexicon, key, turn.start, turn.end);
                    }
                }
            }
        }
    }

    /// Looks up the tokenized words in the lexicon (learning those it meets first), and asks for the
    /// heads of their lists, read a turn later (`read_turn`).
    pub(super) fn resolve(&mut self, matcher: &Matcher, lexicon: &mut Lexicon) {
        let mut occurrences = 0;
        for word in &mut self.words {
            if let Some(key) = word.key.unresolved() {
                word.key = WordKey::resolved(lexicon.place_of_key(key, word.hash, matcher));
            }
            let place = word.key.place();
            lexicon.prefetch_list(place);
            occurrences += place.pattern_count();
        }
        self.occurrences = occurrences;
    }
}

/// The key of a token's word (see [`WordKey`]); None when it is not a word (nothing left after
/// normalizing).
fn key_of(token: &str, matcher: &Matcher, lexicon: &mut Lexicon) -> Option<WordKey> {
    match ascii_token(token.as_bytes()) {
        Token::Inline(key) => return Some(WordKey(key)),
        Token::Empty => return None,
        Token::Other => {}
    }
    normalize_into(token, &mut lexicon.word);
    if lexicon.word.is_empty() {
        return None;
    }
    if let Some(key) = crate::hash::inline_key(&lexicon.word) {
        return Some(WordKey(key));
    }
    // Longer than a key: its place now.
    Some(WordKey::resolved(lexicon.place_of_word(matcher)))
}

#[cfg(test)]
mod tests {
    use crate::compile::matcher_of;
    use crate::{Speaker, Turn};

    #[test]
    fn words_without_patterns_are_kept_only_when_worth_it() {
        let words: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
        let long: Vec<String> = (0..300).map(|i| format!("incomprehensible{i}")).collect();
        let turns = [
            Turn::new(Speaker::Agent, 0.0, 1.0, words.join(" ") + " refund"),
            Turn::new(Speaker::Agent, 1.0, 2.0, long.join(" ") + " refunding"),
        ];
        // Without wildcard patterns, looking a word up again is as cheap as the lexicon: only the words
        // with patterns are kept.
        let matcher = matcher_of(&["refund"]);
        let mut scanner = matcher.scanner();
        assert_eq!(scanner.scan(&turns, 2.0).len(), 1);
        assert_eq!(scanner.state.lexicon.len(), 1);
        // With them, every word is kept (trying the wildcard patterns costs more than a lookup), long
        // ones up to a number of bytes (`MAX_LONG_BYTES`).
        let matcher = matcher_of(&["refund*"]);
        let mut scanner = matcher.scanner();
        assert_eq!(scanner.scan(&turns, 2.0).len(), 2);
        assert_eq!(scanner.state.lexicon.len(), 602);
    }
}
