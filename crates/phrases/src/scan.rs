//! Scanning calls with a compiled [`Matcher`]: each turn is tokenized once, each of its words is looked up
//! in the matcher's indexes (once per distinct word a [`Scanner`] meets when there are wildcard patterns),
//! and only the phrases triggered by a pattern present in the turn, whose second pattern is present too
//! and whose speaker restriction allows the turn, are evaluated, on the positions of their patterns rather
//! than on the text.

use crate::compile::{CompiledPhrase, CompiledSeq, Matcher, Observed, Trigger, NONE};
use crate::glob::glob_match;
use crate::hash::{inline_key, with_inline_word, Seed, WordMap};
use crate::normalize::{ascii_token, normalize_into, split_whitespace, Token};
use crate::turn::Turn;

/// One phrase matching one turn: the phrase's id, the turn's index in the call, and the earliest start and
/// latest end of the words that satisfied it (docs/phrases.md, Matching).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub phrase: u32,
    pub turn: usize,
    pub start: f64,
    pub end: f64,
}

/// The words already looked up, when the matcher has wildcard patterns: looking a word up then costs
/// several probes and pattern matches, and the calls of a company share most of their words.
struct Lexicon {
    word: String,
    /// A word's patterns: a range of `patterns`.
    known: WordMap<(u32, u32)>,
    patterns: Vec<u32>,
}

impl Lexicon {
    fn new(seed: Seed) -> Self {
        Lexicon {
            word: String::new(),
            known: WordMap::with_seed(seed),
            patterns: Vec::new(),
        }
    }
}

/// The patterns found in the turn being scanned.
#[derive(Default)]
struct TurnWords {
    /// Marks the `slots` of the turn being scanned; never 0.
    stamp: u32,
    /// How many words the turn has.
    count: u32,
    /// Each word's own times, when the turn has them.
    times: Vec<(f64, f64)>,
    /// Each word's inline key, or its patterns already found ([`resolved`]).
    keys: Vec<u128>,
    /// (pattern, position) of each word matching a pattern, by position; once grouped, (index in
    /// `ranges`, position).
    occurrences: Vec<(u32, u32)>,
    /// The patterns found, in the order they were first found.
    ranges: Vec<Found>,
    positions: Vec<u32>,
    /// Per pattern of the matcher.
    slots: Vec<Slot>,
    /// Bit `p % 2048` set for each pattern `p` found: a set small enough for the core's fastest cache, so that
    /// the many triggers whose second pattern is absent are told so without reading `slots`.
    present: [u64; PRESENT_WORDS],
}

/// A pattern found in the turn.
struct Found {
    pattern: u32,
    /// Its positions are `positions[start..end]`, ascending.
    start: u32,
    end: u32,
    /// The phrases it triggers, a range of `Matcher::trigger_phrases` (from its [`Slot`]).
    triggers: (u32, u32),
}

/// What a scan keeps of one pattern, in 16 bytes: whether the turn has it and where, and which phrases it
/// triggers, a copy of the matcher's, so that a pattern found in a turn costs one read that may miss the
/// cache, not two.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Valid when it is the turn's stamp.
    stamp: u32,
    /// Its index in `ranges`.
    range: u32,
    triggers: (u32, u32),
    /// How many turns had it ([`Scanner::observed`]).
    turns: u32,
}

const PRESENT_WORDS: usize = 32;
const PRESENT_BITS: u32 = PRESENT_WORDS as u32 * 64;

impl TurnWords {
    /// A new stamp for the next turn, so that the slots of earlier ones no longer count; true when the
    /// stamps wrapped around (and start again from 1).
    fn next_turn(&mut self) -> bool {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slots.iter_mut().for_each(|slot| slot.stamp = 0);
            self.stamp = 1;
            return true;
        }
        false
    }

    /// False when no word of the turn matches the pattern; true when one may ([`NONE`] included).
    #[inline]
    fn may_have(&self, pattern: u32) -> bool {
        let bit = pattern % PRESENT_BITS;
        (pattern == NONE) | (self.present[(bit / 64) as usize] >> (bit % 64) & 1 == 1)
    }

    /// Whether a word of the turn matches the pattern.
    #[inline]
    fn has(&self, pattern: u32) -> bool {
        let bit = pattern % PRESENT_BITS;
        self.present[(bit / 64) as usize] & (1 << (bit % 64)) != 0
            && self.slots[pattern as usize].stamp == self.stamp
    }

    fn positions_of(&self, pattern: u32) -> &[u32] {
        let slot = self.slots[pattern as usize];
        if slot.stamp != self.stamp {
            return &[];
        }
        let found = &self.ranges[slot.range as usize];
        &self.positions[found.start as usize..found.end as usize]
    }

    /// Groups `occurrences` by pattern into `ranges` and `positions`, keeping positions ascending.
    fn group(&mut self) {
        for found in &self.ranges {
            self.present[(found.pattern % PRESENT_BITS / 64) as usize] = 0;
        }
        self.ranges.clear();
        for occurrence in &mut self.occurrences {
            let pattern = occurrence.0;
            let slot = &mut self.slots[pattern as usize];
            if slot.stamp != self.stamp {
                (slot.stamp, slot.range) = (self.stamp, self.ranges.len() as u32);
                slot.turns = slot.turns.saturating_add(1);
                self.ranges.push(Found {
                    pattern,
                    start: 0,
                    end: 0,
                    triggers: slot.triggers,
                });
                let bit = pattern % PRESENT_BITS;
                self.present[(bit / 64) as usize] |= 1 << (bit % 64);
            }
            self.ranges[slot.range as usize].end += 1;
            // The second pass below then needs no slot.
            occurrence.0 = slot.range;
        }
        let mut start = 0;
        for found in &mut self.ranges {
            let count = found.end;
            // `end` counts up from `start` while filling.
            (found.start, found.end) = (start, start);
            start += count;
        }
        self.positions.clear();
        self.positions.resize(self.occurrences.len(), 0);
        for &(range, position) in &self.occurrences {
            let found = &mut self.ranges[range as usize];
            self.positions[found.end as usize] = position;
            found.end += 1;
        }
    }
}

/// Buffers of the search for one sequence.
#[derive(Default)]
struct Search {
    /// `reachable[i]`: the positions of pattern `i` from which the rest of the sequence can be completed
    /// (for each pattern but the last).
    reachable: Vec<Vec<u32>>,
    /// The positions of the leftmost occurrence found.
    chosen: Vec<u32>,
}

/// The last byte of a key that holds a word's patterns rather than the word (an inline key's last byte is
/// the word's length, at most 15): for a word too long to be a key, looked up in the first pass.
const RESOLVED: u128 = 0xFF;

/// The key holding the patterns of a long word: with wildcard patterns, the range of
/// `Lexicon::patterns`; else its literal pattern (or [`NONE`]), and [`NONE`].
fn resolved(a: u32, b: u32) -> u128 {
    (RESOLVED << 120) | (u128::from(b) << 32) | u128::from(a)
}

/// The most distinct words a [`Scanner`] remembers; past that it forgets them all and starts again.
const MAX_KNOWN_WORDS: usize = 1 << 20;

/// Scans calls with one [`Matcher`], keeping its buffers and the words it has looked up from one call to
/// the next: a worker that scores many calls keeps one scanner (they are cheap; one per thread).
pub struct Scanner<'m> {
    matcher: &'m Matcher,
    lexicon: Lexicon,
    words: TurnWords,
    search: Search,
    /// Per phrase of the matcher: the stamp of the last turn it was evaluated on, so that a phrase
    /// triggered by several patterns of a turn is evaluated once.
    seen: Vec<u32>,
    /// How many hits the last call had.
    last_hits: usize,
    /// The triggers to check on the turn.
    candidates: Vec<Trigger>,
    /// The turn's matches: (index of the phrase, start, end).
    found: Vec<(u32, f64, f64)>,
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
            lexicon: Lexicon::new(self.seed),
            words: TurnWords {
                slots: self
                    .trigger_starts
                    .windows(2)
                    .map(|pair| Slot {
                        stamp: 0,
                        range: 0,
                        triggers: (pair[0], pair[1]),
                        turns: 0,
                    })
                    .collect(),
                ..TurnWords::default()
            },
            search: Search::default(),
            seen: vec![0; self.phrases.len()],
            last_hits: 0,
            candidates: Vec::new(),
            found: Vec::new(),
        }
    }
}

impl Scanner<'_> {
    /// How many of the turns it has scanned had each pattern of its matcher, to rebuild the matcher with
    /// triggers fit for such turns ([`Matcher::retuned`]).
    pub fn observed(&self) -> Observed {
        Observed {
            turns: self.words.slots.iter().map(|slot| slot.turns).collect(),
        }
    }

    /// As [`Matcher::scan`].
    pub fn scan(&mut self, turns: &[Turn], duration: f64) -> Vec<Hit> {
        let matcher = self.matcher;
        if self.lexicon.known.len() > MAX_KNOWN_WORDS {
            self.lexicon = Lexicon::new(matcher.seed);
        }
        // As many as the last call had: calls alike have about as many hits, and growing the vector
        // from nothing takes a dozen reallocations for a call with hundreds.
        let mut hits = Vec::with_capacity(self.last_hits);
        for (index, turn) in turns.iter().enumerate() {
            if self.words.next_turn() {
                self.seen.fill(0);
            }
            matcher.read_turn(turn, &mut self.lexicon, &mut self.words);
            let words = &self.words;
            // The triggers of the turn's patterns whose speaker restriction allows the turn and whose
            // second pattern may be present, without a branch per trigger: a turn has a hundred or so
            // triggers, most of them passing or failing at random, and a mispredicted branch costs more
            // than the checks.
            // Each trigger is written after those kept so far, and kept by counting it; the buffer
            // only grows, so that in the long run nothing is zeroed, copied or reallocated per turn.
            let candidates = &mut self.candidates;
            let mut kept = 0;
            for found in &words.ranges {
                let (first, end) = found.triggers;
                let triggered = &matcher.trigger_phrases[first as usize..end as usize];
                if candidates.len() < kept + triggered.len() {
                    candidates.resize(kept + triggered.len(), Trigger::default());
                }
                let room = &mut candidates[kept..kept + triggered.len()];
                let mut n = 0;
                for &trigger in triggered {
                    room[n] = trigger;
                    n += usize::from(trigger.allows(turn.speaker) & words.may_have(trigger.also));
                }
                kept += n;
            }
            let found = &mut self.found;
            found.clear();
            for &trigger in &candidates[..kept] {
                if trigger.also != NONE && !words.has(trigger.also) {
                    continue;
                }
                let seen = &mut self.seen[trigger.phrase() as usize];
                if *seen == words.stamp {
                    continue;
                }
                *seen = words.stamp;
                let phrase = &matcher.phrases[trigger.phrase() as usize];
                if !phrase.in_windows(turn.start, duration) {
                    continue;
                }
                if let Some((start, end)) = matcher.evaluate(phrase, turn, words, &mut self.search)
                {
                    found.push((trigger.phrase(), start, end));
                }
            }
            // By phrase, which is by id, then by the order phrases were added.
            found.sort_unstable_by_key(|&(phrase, _, _)| phrase);
            hits.extend(found.iter().map(|&(phrase, start, end)| Hit {
                phrase: matcher.phrases[phrase as usize].id,
                turn: index,
                start,
                end,
            }));
        }
        self.last_hits = hits.len();
        hits
    }
}

impl Matcher {
    /// Tokenizes a turn and records which patterns its words match, in two passes: every word to its
    /// key, then every key to its patterns. Each pass is a short loop whose steps do not wait on each
    /// other, so the processor reads many words' bytes (first pass) and many words' entries in the table
    /// of words (second pass) at once; done word by word, each of those reads, usually a miss in the
    /// cache, would wait for the one before. A timed word or a token that is ASCII, one word and short
    /// (nearly all of them) goes from its bytes to its key in one step.
    fn read_turn(&self, turn: &Turn, lexicon: &mut Lexicon, words: &mut TurnWords) {
        words.times.clear();
        words.occurrences.clear();
        words.keys.clear();
        match turn.words.as_deref() {
            Some(timed) if !timed.is_empty() => {
                // Each word's text is an allocation of its own, rarely in the cache: a loop that only
                // reads each one's first byte has all of them on the way at once (a prefetch, in safe
                // code), where the loop below would wait for each in turn.
                let mut sink = 0;
                for word in timed {
                    sink ^= word.text.as_bytes().first().copied().unwrap_or(0);
                }
                std::hint::black_box(sink);
                for word in timed {
                    match ascii_token(word.text.as_bytes()) {
                        Token::Inline(key) => {
                            words.keys.push(key);
                            words.times.push((word.start, word.end));
                        }
                        Token::Empty => {}
                        Token::Other => {
                            for token in split_whitespace(&word.text) {
                                if let Some(key) = self.key_of(token, lexicon) {
                                    words.keys.push(key);
                                    words.times.push((word.start, word.end));
                                }
                            }
                        }
                    }
                }
            }
            _ => {
                for token in split_whitespace(&turn.text) {
                    if let Some(key) = self.key_of(token, lexicon) {
                        words.keys.push(key);
                    }
                }
            }
        }
        words.count = words.keys.len() as u32;
        // The same for the entries of the table of words: the frequent words' are in the cache, the
        // rarer words' not.
        let mut sink = 0;
        for &key in &words.keys {
            sink ^= self.touch(lexicon, key);
        }
        std::hint::black_box(sink);
        for (position, &key) in words.keys.iter().enumerate() {
            self.read_key(key, position as u32, lexicon, &mut words.occurrences);
        }
        words.group();
    }

    /// Reads the entry where the table of words holds a key, or would (see `read_turn`).
    #[inline]
    fn touch(&self, lexicon: &Lexicon, key: u128) -> u64 {
        if self.wildcards.is_empty() {
            self.literals.touch(key)
        } else {
            lexicon.known.touch(key)
        }
    }

    /// The key of a token's word (see `keys`); None when it is not a word (nothing left after
    /// normalizing).
    fn key_of(&self, token: &str, lexicon: &mut Lexicon) -> Option<u128> {
        match ascii_token(token.as_bytes()) {
            Token::Inline(key) => return Some(key),
            Token::Empty => return None,
            Token::Other => {}
        }
        normalize_into(token, &mut lexicon.word);
        if lexicon.word.is_empty() {
            return None;
        }
        if let Some(key) = inline_key(&lexicon.word) {
            return Some(key);
        }
        // Longer than a key: its patterns now.
        if self.wildcards.is_empty() {
            let pattern = self.literals.get(&lexicon.word).copied().unwrap_or(NONE);
            return Some(resolved(pattern, NONE));
        }
        let (start, end) = match lexicon.known.get(&lexicon.word) {
            Some(&range) => range,
            None => {
                let range = self.learn(&lexicon.word, &mut lexicon.patterns);
                lexicon.known.insert(&lexicon.word, range);
                range
            }
        };
        Some(resolved(start, end))
    }

    /// Records the patterns of a word, given by its key, at `position`.
    #[inline]
    fn read_key(
        &self,
        key: u128,
        position: u32,
        lexicon: &mut Lexicon,
        occurrences: &mut Vec<(u32, u32)>,
    ) {
        let found = if key >> 120 == RESOLVED {
            (key as u32, (key >> 32) as u32)
        } else if self.wildcards.is_empty() {
            (self.literals.get_inline(key).copied().unwrap_or(NONE), NONE)
        } else {
            match lexicon.known.get_inline(key) {
                Some(&range) => range,
                None => with_inline_word(key, |word| {
                    let range = self.learn(word, &mut lexicon.patterns);
                    lexicon.known.insert(word, range);
                    range
                }),
            }
        };
        if self.wildcards.is_empty() {
            // The word's literal pattern, if any.
            if found.0 != NONE {
                occurrences.push((found.0, position));
            }
        } else {
            for &pattern in &lexicon.patterns[found.0 as usize..found.1 as usize] {
                occurrences.push((pattern, position));
            }
        }
    }

    /// The patterns of a word met for the first time, appended to `patterns`: their range there.
    fn learn(&self, word: &str, patterns: &mut Vec<u32>) -> (u32, u32) {
        let start = patterns.len() as u32;
        self.patterns_of(word, patterns);
        (start, patterns.len() as u32)
    }

    /// Every pattern matching a normalized word: its literal, and the wildcard patterns sharing its prefix
    /// or suffix or having neither.
    fn patterns_of(&self, word: &str, out: &mut Vec<u32>) {
        if let Some(&pattern) = self.literals.get(word) {
            out.push(pattern);
        }
        let wildcards = &self.wildcards;
        let mut try_pattern = |index: u32| {
            let (pattern, text) = &wildcards.texts[index as usize];
            if glob_match(text, word) {
                out.push(*pattern);
            }
        };
        for &length in &wildcards.prefix_lengths {
            if length > word.len() {
                break;
            }
            if let Some(list) = word
                .get(..length)
                .and_then(|prefix| wildcards.by_prefix.get(prefix))
            {
                list.iter().for_each(|&index| try_pattern(index));
            }
        }
        for &length in &wildcards.suffix_lengths {
            if length > word.len() {
                break;
            }
            if let Some(list) = word
                .get(word.len() - length..)
                .and_then(|suffix| wildcards.by_suffix.get(suffix))
            {
                list.iter().for_each(|&index| try_pattern(index));
            }
        }
        wildcards
            .others
            .iter()
            .for_each(|&index| try_pattern(index));
    }
}

impl Matcher {
    /// The first alternative of a phrase whose every sequence occurs in the turn, as the earliest start and
    /// the latest end of the words of their leftmost occurrences.
    fn evaluate(
        &self,
        phrase: &CompiledPhrase,
        turn: &Turn,
        words: &TurnWords,
        search: &mut Search,
    ) -> Option<(f64, f64)> {
        let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
        // Whether a sequence of the current alternative is missing: skip to the alternative's end.
        let mut missing = false;
        for seq in &self.seqs[phrase.seqs.0 as usize..phrase.seqs.1 as usize] {
            if !missing && seq.patterns.1 - seq.patterns.0 == 1 && !seq.starts && !seq.ends {
                // One word anywhere (most sequences): its first position.
                match words.positions_of(seq.first).first() {
                    Some(&position) => {
                        let (s, e) = words
                            .times
                            .get(position as usize)
                            .copied()
                            .unwrap_or((turn.start, turn.end));
                        start = start.min(s);
                        end = end.max(e);
                    }
                    None => missing = true,
                }
            } else if !missing {
                if leftmost(seq, self.patterns_of_seq(seq), words, search) {
                    for &position in &search.chosen {
                        let (s, e) = words
                            .times
                            .get(position as usize)
                            .copied()
                            .unwrap_or((turn.start, turn.end));
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
}

/// Finds the leftmost occurrence of a sequence (smallest first position, then smallest second, ...) into
/// `search.chosen`. Works backwards first: which positions of each pattern can still complete the
/// sequence, then forwards, taking the smallest such position after the previous one.
fn leftmost(seq: &CompiledSeq, patterns: &[u32], words: &TurnWords, search: &mut Search) -> bool {
    search.chosen.clear();
    let last_word = words.count - 1;
    let k = patterns.len();
    if k == 1 {
        let list = words.positions_of(patterns[0]);
        let position = if seq.ends {
            list.last().copied().filter(|&p| p == last_word)
        } else {
            list.first().copied()
        };
        return match position {
            Some(p) if !seq.starts || p == 0 => {
                search.chosen.push(p);
                true
            }
            _ => false,
        };
    }
    // The last pattern's positions that can end the sequence: all of them, or the last word for `$`.
    let mut list = words.positions_of(patterns[k - 1]);
    if seq.ends {
        list = match list.last() {
            Some(p) if *p == last_word => std::slice::from_ref(p),
            _ => &[],
        };
    }
    if list.is_empty() {
        return false;
    }
    if search.reachable.len() < k - 1 {
        search.reachable.resize_with(k - 1, Vec::new);
    }
    for i in (0..k - 1).rev() {
        let (head, tail) = search.reachable.split_at_mut(i + 1);
        let current = &mut head[i];
        let next: &[u32] = if i + 2 == k { list } else { &tail[0] };
        current.clear();
        let mut j = 0;
        for &p in words.positions_of(patterns[i]) {
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
    if seq.starts && first != 0 {
        return false;
    }
    search.chosen.push(first);
    for i in 1..k {
        let previous = search.chosen[i - 1];
        let next: &[u32] = if i + 1 == k {
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
    use crate::{MatcherBuilder, Phrase, Speaker, Turn};

    #[test]
    fn turn_stamps_wrap_around() {
        let mut builder = MatcherBuilder::new();
        builder.add(1, Phrase::parse("refund* please").unwrap(), None);
        let matcher = builder.build();
        let turns: Vec<Turn> = ["refund please", "no", "refunds please", "please"]
            .iter()
            .enumerate()
            .map(|(i, text)| Turn::new(Speaker::Agent, i as f64, i as f64 + 1.0, *text))
            .collect();
        let mut scanner = matcher.scanner();
        scanner.words.stamp = u32::MAX - 1;
        let found: Vec<usize> = scanner.scan(&turns, 10.0).iter().map(|h| h.turn).collect();
        assert_eq!(found, [0, 2]);
        assert_eq!(scanner.words.stamp, 3);
    }

    #[test]
    fn a_default_matcher_finds_nothing() {
        let turns = [Turn::new(Speaker::Agent, 0.0, 1.0, "refund")];
        assert!(crate::Matcher::default().scan(&turns, 1.0).is_empty());
    }
}
