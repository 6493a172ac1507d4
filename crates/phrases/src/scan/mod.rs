//! Scanning calls with a compiled [`Matcher`]: the [`Scanner`], what it keeps from one call to the next
//! ([`ScanState`]), and the loop over a call's turns. Each turn is read once, its words looked up in the
//! scanner's lexicon (which learns a word's patterns and their triggers the first time it meets it), and
//! only the phrases triggered by a pattern present in the turn, whose second pattern is present too and
//! whose speaker restriction allows the turn, are evaluated, on the positions of their patterns rather
//! than on the text (docs/phrases.md, How matching is fast). Each step is a file of this folder, in the
//! order a turn goes through them: `read_ahead`, `staged`, `turn_words`, `candidates`, `evaluate`.

mod candidates;
mod evaluate;
mod read_ahead;
mod staged;
mod turn_words;

use crate::compile::{Matcher, Observed};
use crate::found::Found;
use crate::lexicon::{self, Lexicon};
use crate::program::Program;
use crate::turn::Turn;
use candidates::Candidates;
use evaluate::{evaluate, Search};
use read_ahead::ReadAhead;
use turn_words::{read_turn, TurnWords};

/// A call given up by [`Scanner::scan_within`]: learning its words would have taken more wildcard
/// matching than its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    pub budget: u64,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "matching the call's words would take more than its budget of {} steps",
            self.budget
        )
    }
}

impl std::error::Error for OverBudget {}

/// One phrase matching one turn: the phrase's id, the turn's index in the call, and the earliest start and
/// latest end of the words that satisfied it (docs/phrases.md, Matching).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub phrase: u32,
    pub turn: usize,
    pub start: f64,
    pub end: f64,
}

/// Scans calls with one [`Matcher`], keeping its buffers and the words it has looked up from one call to
/// the next: a worker that scores many calls keeps one scanner (they are cheap; one per thread), or its
/// [`ScanState`].
pub struct Scanner<'m> {
    matcher: &'m Matcher,
    state: ScanState,
}

/// What a [`Scanner`] keeps from one call to the next (the words it has met, its buffers), apart from the
/// matcher it borrows: where a borrowing scanner cannot be kept (beside its matcher, in a pool shared by
/// threads), this is kept, and made a scanner again for each call ([`Scanner::into_state`],
/// [`Matcher::scanner_from`]). It holds the numbers of its matcher's patterns and phrases, so with any
/// other matcher it is not used.
pub struct ScanState {
    /// The id of the matcher it was made with.
    matcher: u64,
    lexicon: Lexicon,
    /// The words per pattern counted by the lexicons it has replaced ([`Scanner::observed`]).
    forgotten: Vec<u32>,
    /// The words of the turns after the one evaluated, on their way.
    ahead: ReadAhead,
    /// What the words of the turn evaluated found.
    words: TurnWords,
    found: Found,
    candidates: Candidates,
    search: Search,
    /// How many hits the last call had.
    last_hits: usize,
}

impl ScanState {
    /// About how many bytes it holds: its lexicon grows with the distinct words met (up to the limits of
    /// `lexicon.rs`), so a pool of states can drop those grown too large to be worth keeping.
    pub fn bytes(&self) -> usize {
        self.lexicon.bytes()
            + std::mem::size_of::<u32>() * self.forgotten.capacity()
            + self.ahead.bytes()
            + self.words.bytes()
            + self.found.bytes()
            + self.candidates.bytes()
    }
}

impl Matcher {
    /// Every match of every phrase in the turns of one call of `duration` seconds, sorted by turn, then by
    /// phrase id (then by the order phrases were added). A phrase matches a turn at most once. The same as
    /// [`Scanner::scan`] on a new scanner.
    pub fn scan(&self, turns: &[Turn], duration: f64) -> Vec<Hit> {
        self.scanner().scan(turns, duration)
    }

    /// A scanner of calls with this matcher.
    pub fn scanner(&self) -> Scanner<'_> {
        Scanner {
            matcher: self,
            state: ScanState {
                matcher: self.id,
                lexicon: Lexicon::new(self.seed),
                forgotten: Vec::new(),
                ahead: ReadAhead::default(),
                words: TurnWords::default(),
                found: Found::new(self.pattern_count()),
                candidates: Candidates::default(),
                search: Search::default(),
                last_hits: 0,
            },
        }
    }

    /// A scanner that goes on from a state kept from a scanner of this matcher, with the words it had
    /// met; a new scanner when the state is another matcher's.
    pub fn scanner_from(&self, state: ScanState) -> Scanner<'_> {
        if state.matcher != self.id {
            return self.scanner();
        }
        Scanner {
            matcher: self,
            state,
        }
    }
}

impl Scanner<'_> {
    /// How many words of the turns it has scanned matched each pattern of its matcher, to rebuild the
    /// matcher with triggers fit for such turns ([`Matcher::retuned`]).
    pub fn observed(&self) -> Observed {
        let mut words = self.state.forgotten.clone();
        words.resize(self.matcher.pattern_count(), 0);
        self.state.lexicon.add_counts(&mut words);
        Observed { words }
    }

    /// Replaces the lexicon with a new one, keeping its counts of words per pattern.
    fn forget_words(&mut self) {
        self.state.forgotten.resize(self.matcher.pattern_count(), 0);
        self.state.lexicon.add_counts(&mut self.state.forgotten);
        self.state.lexicon = self.state.lexicon.renewed(self.matcher.seed);
    }

    /// What it keeps for the next call, to make a scanner of again ([`Matcher::scanner_from`]).
    pub fn into_state(self) -> ScanState {
        self.state
    }

    /// As [`Matcher::scan`].
    pub fn scan(&mut self, turns: &[Turn], duration: f64) -> Vec<Hit> {
        self.scan_within(turns, duration, u64::MAX)
            .expect("an unbounded budget is never spent")
    }

    /// As [`Scanner::scan`], trying wildcard patterns on the call's new words for at most `budget`
    /// steps of wildcard matching (each step one character of a word against one of a pattern, a
    /// backtrack included): a call whose words would take more is given up with [`OverBudget`], its
    /// partly learned words forgotten, so that the scanner goes on with the next call as if it had not
    /// seen it. Calls of words the scanner knew already cost nothing of it.
    pub fn scan_within(
        &mut self,
        turns: &[Turn],
        duration: f64,
        budget: u64,
    ) -> Result<Vec<Hit>, OverBudget> {
        self.state.lexicon.budget = lexicon::Budget::of(budget);
        let hits = self.scan_turns(turns, duration);
        let spent = self.state.lexicon.budget.spent;
        self.state.lexicon.budget = lexicon::Budget::of(u64::MAX);
        if spent {
            self.forget_words();
            return Err(OverBudget { budget });
        }
        Ok(hits)
    }

    /// The turns one by one: each read from its words read ahead, its candidate programs chosen and
    /// evaluated, while the turns after it are read ahead.
    fn scan_turns(&mut self, turns: &[Turn], duration: f64) -> Vec<Hit> {
        let matcher = self.matcher;
        // As many as the last call had: calls alike have about as many hits, and growing the vector
        // from nothing takes a dozen reallocations for a call with hundreds.
        let mut hits = Vec::with_capacity(self.state.last_hits);
        let state = &mut self.state;
        state.ahead.read_from(matcher, &mut state.lexicon, turns, 0);
        for (index, turn) in turns.iter().enumerate() {
            if self.state.lexicon.budget.spent {
                // Given up: what follows would be read with words learned in part.
                break;
            }
            if self.state.lexicon.is_full() {
                // The turns read ahead hold places in the lexicon replaced: read them again.
                self.forget_words();
                let state = &mut self.state;
                state
                    .ahead
                    .read_from(matcher, &mut state.lexicon, turns, index);
            }
            let state = &mut self.state;
            state
                .ahead
                .read_ahead(matcher, &mut state.lexicon, turns, index);
            let staged = state.ahead.turn(index);
            let triggered = read_turn(
                staged,
                turn.speaker,
                &mut state.lexicon,
                &mut state.words,
                &mut state.found,
            );
            let found = &state.found;
            let programs =
                state
                    .candidates
                    .choose(matcher, turn.speaker, &mut state.words, triggered, found);
            for &offset in programs {
                let program = Program::at(&matcher.program, offset);
                if !program.in_windows(turn.start, duration) {
                    continue;
                }
                if let Some((start, end)) = evaluate(program, staged, found, &mut state.search) {
                    hits.push(Hit {
                        phrase: program.id(),
                        turn: index,
                        start,
                        end,
                    });
                }
            }
        }
        self.state.last_hits = hits.len();
        hits
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::matcher_of;
    use crate::{MatcherBuilder, Phrase, Speaker, Turn};

    #[test]
    fn counts_survive_a_new_lexicon() {
        let matcher = matcher_of(&["please"]);
        let turns = [Turn::new(Speaker::Client, 0.0, 1.0, "please, please help")];
        let mut scanner = matcher.scanner();
        assert_eq!(scanner.scan(&turns, 1.0).len(), 1);
        // Words are counted, not turns: "please" twice.
        assert_eq!(scanner.observed().words, [2]);
        scanner.forget_words();
        assert_eq!(scanner.observed().words, [2]);
        assert_eq!(scanner.scan(&turns, 1.0).len(), 1);
        assert_eq!(scanner.observed().words, [4]);
    }

    #[test]
    fn a_kept_state_goes_on_with_its_words_and_only_with_its_matcher() {
        let mut builder = MatcherBuilder::new();
        builder.add(1, Phrase::parse("refund*").unwrap(), None);
        builder.add(
            2,
            Phrase::parse("money back").unwrap(),
            Some(Speaker::Client),
        );
        let matcher = builder.build().unwrap();
        let first = [Turn::new(
            Speaker::Client,
            0.0,
            1.0,
            "a refund or my money back",
        )];
        let second = [Turn::new(
            Speaker::Client,
            0.0,
            1.0,
            "refunded, money back, fine",
        )];
        let mut scanner = matcher.scanner();
        let hits = scanner.scan(&first, 1.0);
        assert_eq!(hits.iter().map(|h| h.phrase).collect::<Vec<_>>(), [1, 2]);
        let state = scanner.into_state();
        assert_eq!(state.lexicon.len(), 6);
        let bytes = state.bytes();
        assert!(bytes > 0);
        // With its matcher: the words met before are still known, and the hits are a new scanner's.
        let mut scanner = matcher.scanner_from(state);
        assert_eq!(scanner.scan(&second, 1.0), matcher.scan(&second, 1.0));
        assert_eq!(scanner.state.lexicon.len(), 8);
        assert!(scanner.observed().words.iter().sum::<u32>() >= 4);
        // With another matcher, even one retuned from it (its triggers renumbered), it starts afresh.
        let retuned = matcher.retuned(&scanner.observed());
        let state = scanner.into_state();
        let mut other = retuned.scanner_from(state);
        assert_eq!(other.state.lexicon.len(), 0);
        assert_eq!(other.scan(&second, 1.0), matcher.scan(&second, 1.0));
        let unrelated = matcher_of(&["fine"]);
        let mut other = unrelated.scanner_from(other.into_state());
        assert_eq!(other.state.lexicon.len(), 0);
        assert_eq!(other.scan(&second, 1.0).len(), 1);
    }

    #[test]
    fn a_default_matcher_finds_nothing() {
        let turns = [Turn::new(Speaker::Agent, 0.0, 1.0, "refund")];
        assert!(crate::Matcher::default().scan(&turns, 1.0).is_empty());
    }
}
