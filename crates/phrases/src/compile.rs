//! Compiling many phrases into one [`Matcher`]: every distinct word pattern gets a number, and the indexes
//! that let a scan go from a turn's words to the few phrases that could match it, never trying the others:
//! exact words to their pattern, wildcard patterns by their literal prefix or suffix, and each pattern to the
//! phrases it triggers, with a second pattern that must be present too (docs/phrases.md, How matching is
//! fast).

use crate::error::TooLarge;
use crate::hash::{Seed, SeededMap, WordMap};
use crate::numbers::{PatternId, ProgramOffset};
use crate::phrase::{Pattern, Phrase};
use crate::program::{self, Seq};
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

    /// The matcher of the phrases added; [`TooLarge`] when they overflow its numbers (more than 2^29
    /// phrases, say), which no application of the analytics API's limits comes near.
    pub fn build(self) -> Result<Matcher, TooLarge> {
        let mut entries = self.entries;
        // Stable: equal ids keep the order they were added in.
        entries.sort_by_key(|(id, _, _)| *id);
        let seed = Seed::random();
        let mut patterns = Patterns::new(seed);
        let mut matcher = Matcher {
            id: next_id(),
            seed,
            phrase_count: entries.len(),
            ..Matcher::default()
        };
        // The phrase's sequences, each with its patterns' numbers, and an alternative's distinct patterns.
        let mut seqs: Vec<(&crate::phrase::Seq, bool, Vec<PatternId>)> = Vec::new();
        let mut distinct = Vec::new();
        for (index, (id, phrase, speaker)) in entries.iter().enumerate() {
            let offset = u32::try_from(matcher.program.len())
                .ok()
                .filter(|&offset| (offset as usize) < MAX_PROGRAM)
                .map(ProgramOffset::new)
                .ok_or(TooLarge::new("programs of 2^30 numbers in all"))?;
            seqs.clear();
            for all in &phrase.alternatives {
                distinct.clear();
                for (i, seq) in all.iter().enumerate() {
                    let numbers: Vec<PatternId> =
                        seq.words.iter().map(|w| patterns.intern(w)).collect();
                    distinct.extend(&numbers);
                    seqs.push((seq, i + 1 == all.len(), numbers));
                }
                distinct.sort_unstable();
                distinct.dedup();
                let first = matcher.alternative_patterns.len() as u32;
                matcher.alternative_patterns.extend(&distinct);
                matcher.alternatives.push(Alternative {
                    program: offset,
                    patterns: (first, matcher.alternative_patterns.len() as u32),
                    speaker: *speaker,
                });
            }
            program::write(
                &mut matcher.program,
                *id,
                index as u32,
                (phrase.start_window, phrase.end_window),
                seqs.iter().map(|(seq, closes, numbers)| Seq {
                    starts: seq.starts,
                    ends: seq.ends,
                    closes: *closes,
                    within: seq.within,
                    patterns: numbers.as_slice(),
                }),
            )?;
        }
        matcher.guesses = patterns.guesses(&matcher);
        let guesses = matcher.guesses.clone();
        matcher.choose_triggers(|pattern| (0, guesses[pattern.index()]));
        matcher.wildcards = Wildcards::new(&patterns, seed);
        matcher.literals = patterns.literals;
        Ok(matcher)
    }
}

/// The matcher of phrases written as text, each for both speakers, with ids from 0 in order (for tests).
#[cfg(test)]
pub(crate) fn matcher_of(phrases: &[&str]) -> Matcher {
    let mut builder = MatcherBuilder::new();
    for (i, text) in phrases.iter().enumerate() {
        builder.add(i as u32, Phrase::parse(text).unwrap(), None);
    }
    builder.build().unwrap()
}

/// A new matcher's id: never 0, never repeated in the process.
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The rows of `(pattern, value)` pairs as offsets and values: pattern `p`'s values are
/// `values[starts[p]..starts[p + 1]]`, in ascending order.
fn csr<T: Ord>(rows: usize, mut pairs: Vec<(PatternId, T)>) -> (Vec<u32>, Vec<T>) {
    pairs.sort_unstable();
    let mut starts = vec![0u32; rows + 1];
    for &(row, _) in &pairs {
        starts[row.index() + 1] += 1;
    }
    for r in 0..rows {
        starts[r + 1] += starts[r];
    }
    (starts, pairs.into_iter().map(|(_, value)| value).collect())
}

/// The distinct word patterns of all phrases, numbered.
struct Patterns {
    numbers: SeededMap<String, PatternId>,
    texts: Vec<String>,
    /// The patterns without wildcards, by their text.
    literals: WordMap<PatternId>,
}

impl Patterns {
    fn new(seed: Seed) -> Self {
        Patterns {
            numbers: SeededMap::with_hasher(seed),
            texts: Vec::new(),
            literals: WordMap::with_seed(seed),
        }
    }

    fn intern(&mut self, pattern: &Pattern) -> PatternId {
        if let Some(&number) = self.numbers.get(&pattern.text) {
            return number;
        }
        let number = PatternId::new(self.texts.len() as u32);
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
        for alternative in &matcher.alternatives {
            for &pattern in matcher.patterns_of_alternative(alternative) {
                shared[pattern.index()] += 1;
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
    pub(crate) texts: Vec<(PatternId, Box<str>)>,
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
            let number = PatternId::new(number as u32);
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
}

/// Adds `index` to the list of `key`.
fn push_to(map: &mut WordMap<Vec<u32>>, key: &str, index: u32) {
    match map.get_mut(key) {
        Some(list) => list.push(index),
        None => map.insert(key, vec![index]),
    }
}

/// A phrase triggered by a pattern present in a turn: it is evaluated when its speaker restriction allows
/// the turn's speaker and, unless it is [`PatternId::NONE`], its second pattern `also` is present in the
/// turn too.
/// Both checks take no more than the trigger and the turn's patterns, so most phrases triggered by a
/// frequent word are skipped without reading the phrase. Eight bytes: the speaker restriction is in the
/// top bits of the phrase's program offset.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Trigger {
    /// Offset of the phrase's program in `Matcher::program`, below [`MAX_PROGRAM`], with [`AGENT_ONLY`]
    /// or [`CLIENT_ONLY`].
    packed: u32,
    pub(crate) also: PatternId,
}

/// How long the programs of a matcher's phrases are in all, at most: their offsets leave two bits to the
/// speaker restriction.
pub(crate) const MAX_PROGRAM: usize = 1 << 30;
const AGENT_ONLY: u32 = 1 << 30;
const CLIENT_ONLY: u32 = 1 << 31;

impl Trigger {
    fn new(program: ProgramOffset, also: PatternId, speaker: Option<Speaker>) -> Self {
        let restriction = match speaker {
            None => 0,
            Some(Speaker::Agent) => AGENT_ONLY,
            Some(Speaker::Client) => CLIENT_ONLY,
        };
        Trigger {
            packed: program.number() | restriction,
            also,
        }
    }

    /// Offset of the phrase's program in `Matcher::program`.
    #[inline]
    pub(crate) fn program(self) -> ProgramOffset {
        ProgramOffset::new(self.packed & !(AGENT_ONLY | CLIENT_ONLY))
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

/// How many words of the turns a scanner has read matched each pattern of its matcher
/// ([`crate::Scanner::observed`]), for [`Matcher::retuned`].
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub(crate) words: Vec<u32>,
}

/// Many phrases compiled together, to find which of them match each turn of a call ([`Matcher::scan`]).
/// Immutable once built, so one matcher can serve many threads. Each phrase is a program of a few numbers
/// in one array (see the program module), so that evaluating one reads few cache lines.
#[derive(Debug, Default, Clone)]
pub struct Matcher {
    /// Tells its scanners' kept states from other matchers' ([`crate::ScanState`]): unique to each
    /// matcher built or retuned in the process; 0 for the default, empty matcher.
    pub(crate) id: u64,
    /// The seed of its maps' hash, and of its scanners' (see the hash module).
    pub(crate) seed: Seed,
    /// Patterns without wildcards, by their text.
    pub(crate) literals: WordMap<PatternId>,
    pub(crate) wildcards: Wildcards,
    phrase_count: usize,
    /// The phrases' programs, sorted by id, then by the order they were added: a program's offset orders
    /// phrases as hits are.
    pub(crate) program: Vec<u32>,
    /// Pattern `p` triggers the phrases `trigger_phrases[trigger_starts[p]..trigger_starts[p + 1]]`.
    pub(crate) trigger_starts: Vec<u32>,
    pub(crate) trigger_phrases: Vec<Trigger>,
    /// Every alternative of every phrase, for choosing their triggers.
    alternatives: Vec<Alternative>,
    /// The distinct patterns of each alternative, ascending.
    alternative_patterns: Vec<PatternId>,
    /// Per pattern: its rank from the least likely to occur, guessed from the phrases alone.
    guesses: Vec<u32>,
}

/// One alternative of a phrase.
#[derive(Debug, Clone, Copy)]
struct Alternative {
    /// The offset of its phrase's program.
    program: ProgramOffset,
    /// A range of `Matcher::alternative_patterns`.
    patterns: (u32, u32),
    speaker: Option<Speaker>,
}

impl Matcher {
    /// How many phrases it holds.
    pub fn len(&self) -> usize {
        self.phrase_count
    }

    pub fn is_empty(&self) -> bool {
        self.phrase_count == 0
    }

    /// Whether some of its patterns have wildcards.
    pub(crate) fn has_wildcards(&self) -> bool {
        !self.wildcards.texts.is_empty()
    }

    /// How many distinct word patterns its phrases have.
    pub(crate) fn pattern_count(&self) -> usize {
        self.trigger_starts.len().saturating_sub(1)
    }

    /// The triggers of the phrases `pattern` triggers.
    #[inline]
    pub(crate) fn triggered(&self, pattern: PatternId) -> &[Trigger] {
        let p = pattern.index();
        &self.trigger_phrases[self.trigger_starts[p] as usize..self.trigger_starts[p + 1] as usize]
    }

    /// The distinct patterns of an alternative.
    fn patterns_of_alternative(&self, alternative: &Alternative) -> &[PatternId] {
        &self.alternative_patterns[alternative.patterns.0 as usize..alternative.patterns.1 as usize]
    }

    /// Chooses the triggers of every alternative: its two patterns with the least `rarity` (the first
    /// triggers it, the second must be present too).
    fn choose_triggers(&mut self, rarity: impl Fn(PatternId) -> (u32, u32)) {
        let mut all = Vec::new();
        let mut triggers: Vec<(PatternId, Trigger)> = Vec::with_capacity(self.alternatives.len());
        for alternative in &self.alternatives {
            all.clear();
            all.extend_from_slice(self.patterns_of_alternative(alternative));
            all.sort_unstable_by_key(|&pattern| (rarity(pattern), pattern));
            let pattern = all.first().copied().unwrap_or_default();
            let also = all.get(1).copied().unwrap_or(PatternId::NONE);
            triggers.push((
                pattern,
                Trigger::new(alternative.program, also, alternative.speaker),
            ));
        }
        // A phrase whose alternatives have the same trigger is triggered once by it.
        triggers.sort_unstable();
        triggers.dedup();
        (self.trigger_starts, self.trigger_phrases) = csr(self.guesses.len(), triggers);
    }

    /// The same matcher with triggers chosen by how many words of the turns a scanner has read matched
    /// each pattern (`Scanner::observed`), the guesses from the phrases breaking ties: a worker can rebuild
    /// its matcher this way once it has scanned enough calls, so that frequent words trigger fewer
    /// phrases. Matches are the same whatever the triggers.
    pub fn retuned(&self, observed: &Observed) -> Matcher {
        let mut matcher = self.clone();
        matcher.id = next_id();
        let seen = |pattern: PatternId| observed.words.get(pattern.index()).copied().unwrap_or(0);
        matcher.choose_triggers(|pattern| (seen(pattern), self.guesses[pattern.index()]));
        matcher
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index of the phrase a trigger triggers.
    fn phrase(m: &Matcher, t: &Trigger) -> u32 {
        program::Program::at(&m.program, t.program()).index()
    }

    #[test]
    fn patterns_are_shared_and_indexed_by_kind() {
        let m = matcher_of(&["refund please", "refund* | *fund", "re?und & *un* & x"]);
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
        let m = builder.build().unwrap();
        // Patterns in order of appearance: a, refund, refund*, x, *fund, pay, refunds.
        let number = |text: &str| *m.literals.get(text).unwrap();
        let triggered = |pattern: PatternId| {
            m.triggered(pattern)
                .iter()
                .map(|t| (phrase(&m, t), t.also, t.speaker()))
                .collect::<Vec<_>>()
        };
        assert_eq!(triggered(number("refund")), [(0, number("a"), None)]);
        // "a a" has one distinct pattern: no second one to check.
        assert_eq!(
            triggered(number("a")),
            [(3, PatternId::NONE, Some(Speaker::Client))]
        );
        // "x" is a literal, so it beats "refund*"; "*fund" alone triggers the second alternative.
        let (refund_star, star_fund) = (PatternId::new(2), PatternId::new(4));
        assert_eq!(
            triggered(number("x")),
            [(1, refund_star, Some(Speaker::Agent))]
        );
        assert_eq!(
            triggered(star_fund),
            [(1, PatternId::NONE, Some(Speaker::Agent))]
        );
        assert_eq!(triggered(number("refunds")), [(2, number("pay"), None)]);
        assert_eq!(triggered(number("pay")), []);
        assert_eq!(triggered(refund_star), []);
    }

    #[test]
    fn a_pattern_few_phrases_use_triggers_before_a_longer_shared_one() {
        let m = matcher_of(&["account xy", "account* zq | account hi", "account", "xy zq"]);
        let number = |text: &str| *m.literals.get(text).unwrap();
        let triggered = |pattern: PatternId| {
            m.triggered(pattern)
                .iter()
                .map(|t| (phrase(&m, t), t.also))
                .collect::<Vec<_>>()
        };
        // Patterns account, xy, account*, zq, hi: "account" is in three alternatives, "xy" and "zq" in
        // two, "account*" and "hi" in one.
        assert_eq!(triggered(number("account")), [(2, PatternId::NONE)]);
        assert_eq!(triggered(number("hi")), [(1, number("account"))]);
        let account_star = PatternId::new(2);
        assert_eq!(triggered(account_star), [(1, number("zq"))]);
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
        let m = matcher_of(&["refund please", "please help", "refund policy"]);
        let number = |text: &str| *m.literals.get(text).unwrap();
        let triggered = |m: &Matcher, pattern: PatternId| {
            m.triggered(pattern)
                .iter()
                .map(|t| (phrase(m, t), t.also))
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
        let seen = |text: &str| observed.words[number(text).index()];
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
        let m = builder.build().unwrap();
        let mut order: Vec<(u32, String)> = Vec::new();
        let mut offset = 0;
        while offset < m.program.len() {
            let p = program::Program::at(&m.program, ProgramOffset::new(offset as u32));
            assert_eq!(p.index() as usize, order.len());
            let pattern = p.seqs().next().unwrap().patterns.get(0);
            let text = m.literals.words().find(|(_, &n)| n == pattern).unwrap().0;
            order.push((p.id(), text));
            offset += m.program[offset + 2] as usize;
        }
        let expected = [(1, "d"), (3, "b"), (7, "a"), (7, "c")];
        assert_eq!(order, expected.map(|(id, t)| (id, t.to_string())));
        assert_eq!(m.len(), 4);
        assert!(!m.is_empty());
        assert!(MatcherBuilder::new().build().unwrap().is_empty());
    }
}
