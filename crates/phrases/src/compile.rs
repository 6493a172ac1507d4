//! Compiling many phrases into one [`Matcher`]: every distinct word pattern gets a number, and the indexes
//! that let a scan go from a turn's words to the few phrases that could match it, never trying the others:
//! exact words to their pattern, wildcard patterns by their literal prefix or suffix, and each pattern to the
//! phrases it triggers, with a second pattern that must be present too (docs/phrases.md, How matching is
//! fast).

use crate::hash::{Seed, SeededMap, WordMap};
use crate::phrase::{Pattern, Phrase};
use crate::turn::Speaker;

/// Collects phrases, each with the caller's id and an optional speaker restriction, and builds the
/// [`Matcher`] of them all.
#[derive(Debug, Default, Clone)]
pub struct MatcherBuilder {
    entries: Vec<(u32, Phrase, Option<Speaker>)>,
}

impl MatcherBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a phrase under `id`; with `speaker`, it matches only that speaker's turns. Ids need not be
    /// unique: each phrase added matches on its own, and hits of equal ids come in the order they were
    /// added.
    pub fn add(&mut self, id: u32, phrase: Phrase, speaker: Option<Speaker>) -> &mut Self {
        self.entries.push((id, phrase, speaker));
        self
    }

    pub fn build(self) -> Matcher {
        let mut entries = self.entries;
        assert!(entries.len() < MAX_PHRASES, "more than 2^30 phrases");
        // Stable: equal ids keep the order they were added in.
        entries.sort_by_key(|(id, _, _)| *id);
        let seed = Seed::random();
        let mut patterns = Patterns::new(seed);
        let mut matcher = Matcher {
            seed,
            ..Matcher::default()
        };
        for (index, (id, phrase, speaker)) in entries.into_iter().enumerate() {
            let first_seq_of_phrase = matcher.seqs.len() as u32;
            for all in &phrase.alternatives {
                let first_seq = matcher.seqs.len() as u32;
                for seq in all {
                    let start = matcher.seq_patterns.len() as u32;
                    matcher
                        .seq_patterns
                        .extend(seq.words.iter().map(|w| patterns.intern(w)));
                    matcher.seqs.push(CompiledSeq {
                        first: matcher.seq_patterns[start as usize],
                        patterns: (start, matcher.seq_patterns.len() as u32),
                        starts: seq.starts,
                        ends: seq.ends,
                        closes: false,
                        within: seq.within,
                    });
                }
                if let Some(last) = matcher.seqs.last_mut() {
                    last.closes = true;
                }
                matcher.alternatives.push(Alternative {
                    phrase: index as u32,
                    seqs: (first_seq, matcher.seqs.len() as u32),
                    speaker,
                });
            }
            matcher.phrases.push(CompiledPhrase {
                id,
                seqs: (first_seq_of_phrase, matcher.seqs.len() as u32),
                start_window: phrase.start_window.unwrap_or(f64::INFINITY),
                end_window: phrase.end_window.unwrap_or(f64::INFINITY),
            });
        }
        matcher.guesses = patterns.guesses(&matcher);
        let guesses = matcher.guesses.clone();
        matcher.choose_triggers(|pattern| (0, guesses[pattern as usize]));
        matcher.wildcards = Wildcards::new(&patterns, seed);
        matcher.literals = patterns.literals;
        matcher
    }
}

/// The rows of `(row, value)` pairs as offsets and values: row `r`'s values are
/// `values[starts[r]..starts[r + 1]]`, in ascending order.
fn csr<T: Ord>(rows: usize, mut pairs: Vec<(u32, T)>) -> (Vec<u32>, Vec<T>) {
    pairs.sort_unstable();
    let mut starts = vec![0u32; rows + 1];
    for &(row, _) in &pairs {
        starts[row as usize + 1] += 1;
    }
    for r in 0..rows {
        starts[r + 1] += starts[r];
    }
    (starts, pairs.into_iter().map(|(_, value)| value).collect())
}

/// The distinct word patterns of all phrases, numbered.
struct Patterns {
    numbers: SeededMap<String, u32>,
    texts: Vec<String>,
    /// The patterns without wildcards, by their text.
    literals: WordMap<u32>,
}

impl Patterns {
    fn new(seed: Seed) -> Self {
        Patterns {
            numbers: SeededMap::with_hasher(seed),
            texts: Vec::new(),
            literals: WordMap::with_seed(seed),
        }
    }

    fn intern(&mut self, pattern: &Pattern) -> u32 {
        if let Some(&number) = self.numbers.get(&pattern.text) {
            return number;
        }
        let number = self.texts.len() as u32;
        self.numbers.insert(pattern.text.clone(), number);
        self.texts.push(pattern.text.clone());
        if !pattern.has_wildcards() {
            self.literals.insert(&pattern.text, number);
        }
        number
    }

    /// Each pattern's rank among all, from the least likely to occur in a turn as far as the phrases tell:
    /// a pattern that few alternatives use is taken to be a rare word (the phrases of a company repeat
    /// its frequent words), then literal words before wildcard patterns, then the most characters that
    /// are not wildcards, then the first numbered.
    fn guesses(&self, matcher: &Matcher) -> Vec<u32> {
        let mut shared = vec![0u32; self.texts.len()];
        let mut distinct = Vec::new();
        for alternative in &matcher.alternatives {
            distinct.clear();
            distinct.extend(matcher.seq_patterns_of_all(alternative.seqs));
            distinct.sort_unstable();
            distinct.dedup();
            for &pattern in &distinct {
                shared[pattern as usize] += 1;
            }
        }
        let weight = |number: u32| {
            let text = &self.texts[number as usize];
            let literal = text.chars().filter(|c| !matches!(c, '*' | '?')).count();
            (
                shared[number as usize],
                text.contains(['*', '?']),
                std::cmp::Reverse(literal),
                number,
            )
        };
        let mut order: Vec<u32> = (0..self.texts.len() as u32).collect();
        order.sort_unstable_by_key(|&number| weight(number));
        let mut ranks = vec![0; order.len()];
        for (rank, &number) in order.iter().enumerate() {
            ranks[number as usize] = rank as u32;
        }
        ranks
    }
}

/// The wildcard patterns, found for a word by the literal text before their first wildcard (its prefix),
/// else after their last (its suffix), else tried on every word.
#[derive(Debug, Default, Clone)]
pub(crate) struct Wildcards {
    pub(crate) texts: Vec<(u32, Box<str>)>,
    pub(crate) by_prefix: WordMap<Vec<u32>>,
    /// The distinct byte lengths of the prefixes, ascending.
    pub(crate) prefix_lengths: Vec<usize>,
    pub(crate) by_suffix: WordMap<Vec<u32>>,
    pub(crate) suffix_lengths: Vec<usize>,
    /// Patterns starting and ending with a wildcard.
    pub(crate) others: Vec<u32>,
}

impl Wildcards {
    fn new(patterns: &Patterns, seed: Seed) -> Self {
        let mut wildcards = Wildcards {
            by_prefix: WordMap::with_seed(seed),
            by_suffix: WordMap::with_seed(seed),
            ..Wildcards::default()
        };
        for (number, text) in patterns.texts.iter().enumerate() {
            let Some(first) = text.find(['*', '?']) else {
                continue;
            };
            let number = number as u32;
            let index = wildcards.texts.len() as u32;
            wildcards.texts.push((number, text.as_str().into()));
            let last = text.rfind(['*', '?']).unwrap_or(first);
            if first > 0 {
                let prefix = &text[..first];
                push_to(&mut wildcards.by_prefix, prefix, index);
                wildcards.prefix_lengths.push(prefix.len());
            } else if last + 1 < text.len() {
                let suffix = &text[last + 1..];
                push_to(&mut wildcards.by_suffix, suffix, index);
                wildcards.suffix_lengths.push(suffix.len());
            } else {
                wildcards.others.push(index);
            }
        }
        for lengths in [&mut wildcards.prefix_lengths, &mut wildcards.suffix_lengths] {
            lengths.sort_unstable();
            lengths.dedup();
        }
        wildcards
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// Adds `index` to the list of `key`.
fn push_to(map: &mut WordMap<Vec<u32>>, key: &str, index: u32) {
    match map.get_mut(key) {
        Some(list) => list.push(index),
        None => map.insert(key, vec![index]),
    }
}

/// No second pattern (see [`Trigger`]).
pub(crate) const NONE: u32 = u32::MAX;

/// A phrase triggered by a pattern present in a turn: it is evaluated when its speaker restriction allows
/// the turn's speaker and, unless it is [`NONE`], its second pattern `also` is present in the turn too.
/// Both checks take no more than the trigger and the turn's patterns, so most phrases triggered by a
/// frequent word are skipped without reading the phrase. Eight bytes: the speaker restriction is in the
/// top bits of the phrase's index.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Trigger {
    /// Index in `Matcher::phrases`, below [`MAX_PHRASES`], with [`AGENT_ONLY`] or [`CLIENT_ONLY`].
    packed: u32,
    pub(crate) also: u32,
}

/// How many phrases a matcher holds at most: their indexes leave two bits to the speaker restriction.
pub(crate) const MAX_PHRASES: usize = 1 << 30;
const AGENT_ONLY: u32 = 1 << 30;
const CLIENT_ONLY: u32 = 1 << 31;

impl Trigger {
    fn new(phrase: u32, also: u32, speaker: Option<Speaker>) -> Self {
        let restriction = match speaker {
            None => 0,
            Some(Speaker::Agent) => AGENT_ONLY,
            Some(Speaker::Client) => CLIENT_ONLY,
        };
        Trigger {
            packed: phrase | restriction,
            also,
        }
    }

    /// Index in `Matcher::phrases`.
    pub(crate) fn phrase(self) -> u32 {
        self.packed & !(AGENT_ONLY | CLIENT_ONLY)
    }

    /// Whether the phrase may match a turn of `speaker`.
    #[inline]
    pub(crate) fn allows(self, speaker: Speaker) -> bool {
        let excluded = match speaker {
            Speaker::Agent => CLIENT_ONLY,
            Speaker::Client => AGENT_ONLY,
        };
        self.packed & excluded == 0
    }

    #[cfg(test)]
    fn speaker(self) -> Option<Speaker> {
        match (self.allows(Speaker::Agent), self.allows(Speaker::Client)) {
            (true, false) => Some(Speaker::Agent),
            (false, true) => Some(Speaker::Client),
            _ => None,
        }
    }
}

/// A phrase of the matcher: its id, sequences and time windows (its speaker restriction is in its
/// triggers), in 32 bytes.
#[derive(Debug, Clone)]
pub(crate) struct CompiledPhrase {
    pub(crate) id: u32,
    /// A range of `Matcher::seqs`: its alternatives in textual order, each ended by a sequence that
    /// `closes` it.
    pub(crate) seqs: (u32, u32),
    /// `~s<T`, else infinity.
    pub(crate) start_window: f64,
    /// `~e<T`, else infinity.
    pub(crate) end_window: f64,
}

impl CompiledPhrase {
    /// Whether a turn starting at `start` in a call of `duration` seconds is inside the phrase's windows:
    /// `~s<T` starts before T, `~e<T` starts at or after the duration minus T (without a window: below
    /// infinity, at or after minus infinity).
    pub(crate) fn in_windows(&self, start: f64, duration: f64) -> bool {
        start < self.start_window && start >= duration - self.end_window
    }
}

/// One sequence of an alternative.
#[derive(Debug, Clone)]
pub(crate) struct CompiledSeq {
    /// Its first pattern, here so that a one-word sequence (most of them) needs nothing else.
    pub(crate) first: u32,
    /// A range of `Matcher::seq_patterns`: all its patterns.
    pub(crate) patterns: (u32, u32),
    pub(crate) starts: bool,
    pub(crate) ends: bool,
    /// The last sequence of its alternative.
    pub(crate) closes: bool,
    pub(crate) within: u32,
}

/// How many turns each pattern of a matcher occurred in, as counted by a scanner
/// ([`crate::Scanner::observed`]), for [`Matcher::retuned`].
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub(crate) turns: Vec<u32>,
}

/// Many phrases compiled together, to find which of them match each turn of a call ([`Matcher::scan`]).
/// Immutable once built, so one matcher can serve many threads. The phrases are stored flat (phrases,
/// their sequences, their patterns, each in one array) so that evaluating one reads few cache lines.
#[derive(Debug, Default, Clone)]
pub struct Matcher {
    /// The seed of its maps' hash, and of its scanners' (see the hash module).
    pub(crate) seed: Seed,
    /// Patterns without wildcards, by their text.
    pub(crate) literals: WordMap<u32>,
    pub(crate) wildcards: Wildcards,
    /// Sorted by id, then by the order they were added.
    pub(crate) phrases: Vec<CompiledPhrase>,
    pub(crate) seqs: Vec<CompiledSeq>,
    pub(crate) seq_patterns: Vec<u32>,
    /// Pattern `p` triggers the phrases `trigger_phrases[trigger_starts[p]..trigger_starts[p + 1]]`.
    pub(crate) trigger_starts: Vec<u32>,
    pub(crate) trigger_phrases: Vec<Trigger>,
    /// Every alternative of every phrase, for choosing their triggers.
    alternatives: Vec<Alternative>,
    /// Per pattern: its rank from the least likely to occur, guessed from the phrases alone.
    guesses: Vec<u32>,
}

/// One alternative of a phrase: a range of `Matcher::seqs`.
#[derive(Debug, Clone, Copy)]
struct Alternative {
    phrase: u32,
    seqs: (u32, u32),
    speaker: Option<Speaker>,
}

impl Matcher {
    /// How many phrases it holds.
    pub fn len(&self) -> usize {
        self.phrases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn triggered(&self, pattern: u32) -> &[Trigger] {
        let p = pattern as usize;
        &self.trigger_phrases[self.trigger_starts[p] as usize..self.trigger_starts[p + 1] as usize]
    }

    #[inline]
    pub(crate) fn patterns_of_seq<'a>(&'a self, seq: &'a CompiledSeq) -> &'a [u32] {
        if seq.patterns.1 - seq.patterns.0 == 1 {
            std::slice::from_ref(&seq.first)
        } else {
            &self.seq_patterns[seq.patterns.0 as usize..seq.patterns.1 as usize]
        }
    }

    /// Chooses the triggers of every alternative: its two patterns with the least `rarity` (the first
    /// triggers it, the second must be present too).
    fn choose_triggers(&mut self, rarity: impl Fn(u32) -> (u32, u32)) {
        let mut all = Vec::new();
        let mut triggers: Vec<(u32, Trigger)> = Vec::with_capacity(self.alternatives.len());
        for alternative in &self.alternatives {
            all.clear();
            all.extend(self.seq_patterns_of_all(alternative.seqs));
            all.sort_unstable_by_key(|&pattern| (rarity(pattern), pattern));
            all.dedup();
            let pattern = all.first().copied().unwrap_or(0);
            let also = all.get(1).copied().unwrap_or(NONE);
            triggers.push((
                pattern,
                Trigger::new(alternative.phrase, also, alternative.speaker),
            ));
        }
        // A phrase whose alternatives have the same trigger is triggered once by it.
        triggers.sort_unstable();
        triggers.dedup();
        (self.trigger_starts, self.trigger_phrases) = csr(self.guesses.len(), triggers);
    }

    /// The same matcher with triggers chosen by how often each pattern occurred in the turns a scanner
    /// has read (`Scanner::observed`), the guesses from the phrases breaking ties: a worker can rebuild
    /// its matcher this way once it has scanned enough calls, so that frequent words trigger fewer
    /// phrases. Matches are the same whatever the triggers.
    pub fn retuned(&self, observed: &Observed) -> Matcher {
        let mut matcher = self.clone();
        let turns = |pattern: u32| observed.turns.get(pattern as usize).copied().unwrap_or(0);
        matcher.choose_triggers(|pattern| (turns(pattern), self.guesses[pattern as usize]));
        matcher
    }

    /// The patterns of a range of sequences.
    fn seq_patterns_of_all(&self, seqs: (u32, u32)) -> impl Iterator<Item = u32> + '_ {
        self.seqs[seqs.0 as usize..seqs.1 as usize]
            .iter()
            .flat_map(|seq| self.patterns_of_seq(seq).iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(phrases: &[&str]) -> Matcher {
        let mut builder = MatcherBuilder::new();
        for (i, text) in phrases.iter().enumerate() {
            builder.add(i as u32, Phrase::parse(text).unwrap(), None);
        }
        builder.build()
    }

    #[test]
    fn patterns_are_shared_and_indexed_by_kind() {
        let m = build(&["refund please", "refund* | *fund", "re?und & *un* & x"]);
        // refund, please, refund*, *fund, re?und, *un*, x
        assert_eq!(m.trigger_starts.len(), 8);
        assert_eq!(m.literals.len(), 3);
        assert_eq!(m.wildcards.texts.len(), 4);
        let mut prefixes: Vec<String> = m.wildcards.by_prefix.words().map(|(k, _)| k).collect();
        prefixes.sort_unstable();
        assert_eq!(prefixes, ["re", "refund"]);
        assert_eq!(m.wildcards.prefix_lengths, [2, 6]);
        assert_eq!(
            m.wildcards
                .by_suffix
                .words()
                .map(|(k, _)| k)
                .collect::<Vec<_>>(),
            ["fund"]
        );
        assert_eq!(m.wildcards.others.len(), 1);
    }

    #[test]
    fn each_conjunction_is_triggered_by_its_two_most_selective_patterns() {
        let mut builder = MatcherBuilder::new();
        for (text, speaker) in [
            ("a refund", None),
            ("refund* & x | *fund", Some(Speaker::Agent)),
            ("pay & refunds", None),
            ("a a", Some(Speaker::Client)),
        ] {
            builder.add(0, Phrase::parse(text).unwrap(), speaker);
        }
        let m = builder.build();
        // Patterns in order of appearance: a, refund, refund*, x, *fund, pay, refunds.
        let number = |text: &str| *m.literals.get(text).unwrap();
        let triggered = |pattern: u32| {
            m.triggered(pattern)
                .iter()
                .map(|t| (t.phrase(), t.also, t.speaker()))
                .collect::<Vec<_>>()
        };
        assert_eq!(triggered(number("refund")), [(0, number("a"), None)]);
        // "a a" has one distinct pattern: no second one to check.
        assert_eq!(triggered(number("a")), [(3, NONE, Some(Speaker::Client))]);
        // "x" is a literal, so it beats "refund*"; "*fund" alone triggers the second alternative.
        assert_eq!(triggered(number("x")), [(1, 2, Some(Speaker::Agent))]);
        assert_eq!(triggered(4), [(1, NONE, Some(Speaker::Agent))]);
        assert_eq!(triggered(number("refunds")), [(2, number("pay"), None)]);
        assert_eq!(triggered(number("pay")), []);
        assert_eq!(triggered(2), []);
    }

    #[test]
    fn a_pattern_few_phrases_use_triggers_before_a_longer_shared_one() {
        let m = build(&["account xy", "account* zq | account hi", "account", "xy zq"]);
        let number = |text: &str| *m.literals.get(text).unwrap();
        let triggered = |pattern: u32| {
            m.triggered(pattern)
                .iter()
                .map(|t| (t.phrase(), t.also))
                .collect::<Vec<_>>()
        };
        // Patterns account, xy, account*, zq, hi: "account" is in three alternatives, "xy" and "zq" in
        // two, "account*" and "hi" in one.
        assert_eq!(triggered(number("account")), [(2, NONE)]);
        assert_eq!(triggered(number("hi")), [(1, number("account"))]);
        assert_eq!(triggered(2), [(1, number("zq"))]);
        // Equally shared: the literal with more characters first, then the first pattern.
        assert_eq!(
            triggered(number("xy")),
            [(0, number("account")), (3, number("zq"))]
        );
        assert_eq!(triggered(number("zq")), []);
    }

    #[test]
    fn a_retuned_matcher_is_triggered_by_the_patterns_seen_least() {
        use crate::Turn;
        let m = build(&["refund please", "please help", "refund policy"]);
        let number = |text: &str| *m.literals.get(text).unwrap();
        let triggered = |m: &Matcher, pattern: u32| {
            m.triggered(pattern)
                .iter()
                .map(|t| (t.phrase(), t.also))
                .collect::<Vec<_>>()
        };
        // From the phrases: "refund" and "please" are in two alternatives each (and as long: the first
        // wins), "help" and "policy" in one.
        assert_eq!(triggered(&m, number("refund")), [(0, number("please"))]);
        assert_eq!(triggered(&m, number("please")), []);
        assert_eq!(triggered(&m, number("help")), [(1, number("please"))]);
        assert_eq!(triggered(&m, number("policy")), [(2, number("refund"))]);
        // Turns where "please" and "policy" are frequent and "refund" and "help" rare.
        let texts = [
            "please",
            "please policy",
            "refund, please",
            "policy",
            "help",
        ];
        let turns: Vec<Turn> = texts
            .iter()
            .map(|text| Turn::new(Speaker::Agent, 0.0, 1.0, *text))
            .collect();
        let mut scanner = m.scanner();
        scanner.scan(&turns, 10.0);
        let observed = scanner.observed();
        let seen = |text: &str| observed.turns[number(text) as usize];
        assert_eq!(
            [seen("refund"), seen("please"), seen("help"), seen("policy")],
            [1, 3, 1, 2]
        );
        let r = m.retuned(&observed);
        assert_eq!(
            triggered(&r, number("refund")),
            [(0, number("please")), (2, number("policy"))]
        );
        assert_eq!(triggered(&r, number("help")), [(1, number("please"))]);
        assert_eq!(triggered(&r, number("please")), []);
        assert_eq!(triggered(&r, number("policy")), []);
        // Retuning changes no hit.
        let more = [Turn::new(
            Speaker::Client,
            0.0,
            1.0,
            "Refund please, refund policy? Please help",
        )];
        let hits = |m: &Matcher| {
            m.scan(&more, 10.0)
                .iter()
                .map(|h| h.phrase)
                .collect::<Vec<_>>()
        };
        assert_eq!(hits(&m), [0, 1, 2]);
        assert_eq!(hits(&r), [0, 1, 2]);
    }

    #[test]
    fn phrases_are_ordered_by_id_then_insertion() {
        let mut builder = MatcherBuilder::new();
        for (id, text) in [(7, "a"), (3, "b"), (7, "c"), (1, "d")] {
            builder.add(id, Phrase::parse(text).unwrap(), None);
        }
        let m = builder.build();
        let text = |p: &CompiledPhrase| {
            let seq = &m.seqs[p.seqs.0 as usize];
            let pattern = m.patterns_of_seq(seq)[0];
            m.literals.words().find(|(_, &n)| n == pattern).unwrap().0
        };
        let order: Vec<(u32, String)> = m.phrases.iter().map(|p| (p.id, text(p))).collect();
        let expected = [(1, "d"), (3, "b"), (7, "a"), (7, "c")];
        assert_eq!(order, expected.map(|(id, t)| (id, t.to_string())));
        assert_eq!(m.len(), 4);
        assert!(!m.is_empty());
        assert!(MatcherBuilder::new().build().is_empty());
    }
}
