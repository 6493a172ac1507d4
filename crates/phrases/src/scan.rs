//! Scanning calls with a compiled [`Matcher`]: each turn is tokenized once, each of its words is looked up
//! in the scanner's lexicon (which learns a word's patterns and their triggers the first time it meets
//! it), and only the phrases triggered by a pattern present in the turn, whose second pattern is present
//! too and whose speaker restriction allows the turn, are evaluated, on the positions of their patterns
//! rather than on the text. The reads that miss the cache are asked for a turn or more ahead of their use
//! ([`STAGES`]), as the scan is mostly waits on memory otherwise (docs/phrases.md, How matching is fast).

use crate::compile::{Matcher, Observed, NONE};
use crate::found::Found;
use crate::lexicon::{self, pattern_count, Lexicon, MAX_COPIED, NO_TRIGGERS, SHARED};
use crate::normalize::{ascii_token, normalize_into, split_whitespace, Token};
use crate::program::{Program, Seq};
use crate::turn::{Speaker, Turn};
use prefetch::prefetch;

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

/// What the turn being scanned has found of its words ([`read_turn`]). Its buffers only grow, and each
/// holds a few numbers past what the turn filled: words write their patterns and triggers as blocks of a
/// fixed length, the next word's overwriting what was past this one's.
#[derive(Default)]
struct TurnWords {
    /// The pattern and the position of each word matching a pattern, by position, side by side.
    patterns: Vec<u32>,
    positions: Vec<u32>,
    /// The programs triggered alone by the turn's words, in its first `alone` numbers.
    alone: Vec<u32>,
    /// The pairs of a program and the pattern it needs too triggered by the turn's words, in its first
    /// `pairs` numbers.
    pairs: Vec<u32>,
    /// Marks the turn in the lexicon's lists, so that the triggers of a word read twice in it are taken
    /// once; never 0.
    stamp: u32,
}

impl TurnWords {
    /// About how many bytes its buffers hold.
    fn bytes(&self) -> usize {
        4 * (self.patterns.capacity()
            + self.positions.capacity()
            + self.alone.capacity()
            + self.pairs.capacity())
    }
}

/// What [`read_turn`] found: how many numbers of [`TurnWords::alone`] and [`TurnWords::pairs`] the turn
/// filled.
struct Triggered {
    alone: usize,
    pairs: usize,
}

/// One word of a turn read ahead of its evaluation.
#[derive(Clone, Copy)]
struct Word {
    /// Its inline key (see `hash::inline_key`) once tokenized, or its place in the lexicon once looked
    /// up ([`resolved`]).
    key: u128,
    /// The hash of its inline key, from asking for its entry to looking it up.
    hash: u64,
    /// Its own times when the turn has timed words, the turn's otherwise.
    start: f64,
    end: f64,
}

/// The words of a turn read ahead of its evaluation: key and times side by side, so that each word
/// tokenized is one push.
#[derive(Default)]
struct Staged {
    words: Vec<Word>,
    /// How many (pattern, position) pairs its words make, once they are looked up.
    occurrences: usize,
}

impl Staged {
    /// About how many bytes its buffers hold.
    fn bytes(&self) -> usize {
        std::mem::size_of::<Word>() * self.words.capacity()
    }

    /// How many words it holds.
    fn len(&self) -> usize {
        self.words.len()
    }
}

/// How many turns' words are held at once: the turn evaluated, the next one (its words looked up in the
/// lexicon) and the one after (tokenized). Before turn `i` is evaluated, the timed words of turn `i + 4`
/// are asked for, the bytes of the words of turn `i + 3`, the lexicon entries of the words of turn `i + 2`
/// and the lists of the words of turn `i + 1`: the reads of a scan that miss the cache, each needing the
/// one before, are all asked for a turn ahead ([`Scanner::read_ahead`]).
const STAGES: usize = 3;

/// Buffers of the search for one sequence.
#[derive(Default)]
struct Search {
    /// `reachable[i]`: the positions of pattern `i` from which the rest of the sequence can be completed
    /// (for each pattern but the last).
    reachable: Vec<Vec<u32>>,
    /// The positions of the leftmost occurrence found.
    chosen: Vec<u32>,
    /// The positions of the last pattern that can end the sequence.
    last: Vec<u32>,
}

/// The last byte of a key that holds a word's lexicon place rather than the word (an inline key's last
/// byte is the word's length, at most 15): for a word too long to be a key, looked up as it is tokenized.
const RESOLVED: u128 = 0xFF;

/// The key holding the lexicon place of a word: a long word's as it is tokenized, any other word's once
/// it is looked up.
fn resolved(place: u64) -> u128 {
    (RESOLVED << 120) | u128::from(place)
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
    words: TurnWords,
    staged: [Staged; STAGES],
    found: Found,
    search: Search,
    /// How many hits the last call had.
    last_hits: usize,
    /// The programs triggered with a second pattern whose second pattern the turn has, in its first
    /// numbers; it only grows.
    candidates: Vec<u32>,
    /// The programs to evaluate on the turn.
    programs: Vec<u32>,
    /// The turn's patterns whose triggers are not copied in the lexicon (too many).
    shared: Vec<u32>,
}

impl ScanState {
    /// About how many bytes it holds: its lexicon grows with the distinct words met (up to the limits of
    /// `lexicon.rs`), so a pool of states can drop those grown too large to be worth keeping.
    pub fn bytes(&self) -> usize {
        self.lexicon.bytes()
            + 4 * (self.forgotten.capacity()
                + self.programs.capacity()
                + self.shared.capacity()
                + self.candidates.capacity())
            + self.words.bytes()
            + self.staged.iter().map(Staged::bytes).sum::<usize>()
            + self.found.bytes()
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
                words: TurnWords::default(),
                staged: Default::default(),
                found: Found::new(self.pattern_count()),
                search: Search::default(),
                last_hits: 0,
                candidates: Vec::new(),
                programs: Vec::new(),
                shared: Vec::new(),
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

    fn scan_turns(&mut self, turns: &[Turn], duration: f64) -> Vec<Hit> {
        let matcher = self.matcher;
        // As many as the last call had: calls alike have about as many hits, and growing the vector
        // from nothing takes a dozen reallocations for a call with hundreds.
        let mut hits = Vec::with_capacity(self.state.last_hits);
        self.read_from(turns, 0);
        for (index, turn) in turns.iter().enumerate() {
            if self.state.lexicon.budget.spent {
                // Given up: what follows would be read with words learned in part.
                break;
            }
            if self.state.lexicon.is_full() {
                // The turns read ahead hold places in the lexicon replaced: read them again.
                self.forget_words();
                self.read_from(turns, index);
            }
            self.read_ahead(turns, index);
            let staged = &self.state.staged[index % STAGES];
            let shared = &mut self.state.shared;
            shared.clear();
            let triggered = read_turn(
                staged,
                turn.speaker,
                &mut self.state.lexicon,
                &mut self.state.words,
                &mut self.state.found,
                shared,
            );
            let found = &self.state.found;
            let words = &self.state.words;
            // The phrases the turn's words trigger alone, and those whose second pattern is present, the
            // latter without a branch per trigger: a turn has dozens, most of them passing or failing at
            // random, and a mispredicted branch costs more than the check. Each program is written
            // after those kept so far, and kept by counting it; the buffer only grows, so that in the
            // long run nothing is zeroed, copied or reallocated per turn.
            let candidates = &mut self.state.candidates;
            let count = triggered.pairs / 2;
            if candidates.len() < count {
                candidates.resize(count, 0);
            }
            let mut kept = 0;
            for pair in words.pairs[..triggered.pairs].chunks_exact(2) {
                candidates[kept] = pair[0];
                kept += usize::from(found.has(pair[1]));
            }
            let programs = &mut self.state.programs;
            programs.clear();
            programs.extend_from_slice(&words.alone[..triggered.alone]);
            programs.extend_from_slice(&candidates[..kept]);
            for &program in programs.iter() {
                prefetch(matcher.program.as_ptr().wrapping_add(program as usize));
            }
            if !shared.is_empty() {
                shared.sort_unstable();
                shared.dedup();
                for &pattern in shared.iter() {
                    for trigger in matcher.triggered(pattern) {
                        if trigger.allows(turn.speaker)
                            && (trigger.also == NONE || found.has(trigger.also))
                        {
                            programs.push(trigger.program());
                        }
                    }
                }
            }
            // Programs are in the order of phrases, which is by id, then by the order phrases were added;
            // a phrase triggered twice (by two words, or two alternatives) is evaluated once.
            programs.sort_unstable();
            programs.dedup();
            for &offset in programs.iter() {
                let program = Program::at(&matcher.program, offset);
                if !program.in_windows(turn.start, duration) {
                    continue;
                }
                if let Some((start, end)) = evaluate(program, staged, found, &mut self.state.search)
                {
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

impl Scanner<'_> {
    /// Starts reading at turn `first`: what [`Self::read_ahead`] would have done for it and the turns
    /// after it by the time it is evaluated.
    fn read_from(&mut self, turns: &[Turn], first: usize) {
        let turns_from = || turns.iter().enumerate().skip(first);
        turns_from()
            .take(4)
            .for_each(|(_, turn)| prefetch_words(turn));
        turns_from()
            .take(3)
            .for_each(|(_, turn)| prefetch_text(turn));
        let state = &mut self.state;
        for (index, turn) in turns_from().take(2) {
            let staged = &mut state.staged[index % STAGES];
            self.matcher.tokenize(turn, &mut state.lexicon, staged);
        }
        if first < turns.len() {
            let staged = &mut state.staged[first % STAGES];
            self.matcher.resolve(&mut state.lexicon, staged);
        }
    }

    /// Before turn `index` is evaluated, moves each turn after it one step on the way (see [`STAGES`]):
    /// each step asks for what the next one reads, which then arrives while the turns between are worked
    /// on, rather than being waited for.
    fn read_ahead(&mut self, turns: &[Turn], index: usize) {
        if let Some(turn) = turns.get(index + 4) {
            prefetch_words(turn);
        }
        if let Some(turn) = turns.get(index + 3) {
            prefetch_text(turn);
        }
        let state = &mut self.state;
        if let Some(turn) = turns.get(index + 2) {
            let staged = &mut state.staged[(index + 2) % STAGES];
            self.matcher.tokenize(turn, &mut state.lexicon, staged);
        }
        if index + 1 < turns.len() {
            let staged = &mut state.staged[(index + 1) % STAGES];
            self.matcher.resolve(&mut state.lexicon, staged);
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

impl Matcher {
    /// Tokenizes a turn into its keys, and asks for the lexicon's entries of those keys, which are read a
    /// turn later ([`Self::resolve`]). A timed word or a token that is ASCII, one word and short (nearly
    /// all of them) goes from its bytes to its key in one step.
    fn tokenize(&self, turn: &Turn, lexicon: &mut Lexicon, staged: &mut Staged) {
        let words = &mut staged.words;
        words.clear();
        // A word whose key is still its bytes has its entry asked for as it is staged; a long word's
        // place is known already.
        let mut stage = |lexicon: &Lexicon, key: u128, start: f64, end: f64| {
            let hash = if key >> 120 != RESOLVED {
                lexicon.prefetch(key)
            } else {
                0
            };
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
                        Token::Inline(key) => stage(lexicon, key, word.start, word.end),
                        Token::Empty => {}
                        Token::Other => {
                            for token in split_whitespace(&word.text) {
                                if let Some(key) = self.key_of(token, lexicon) {
                                    stage(lexicon, key, word.start, word.end);
                                }
                            }
                        }
                    }
                }
            }
            _ => {
                for token in split_whitespace(&turn.text) {
                    if let Some(key) = self.key_of(token, lexicon) {
                        stage(lexicon, key, turn.start, turn.end);
                    }
                }
            }
        }
    }

    /// Looks up a tokenized turn's words in the lexicon (learning those it meets first), and asks for the
    /// heads of their lists, read a turn later ([`read_turn`]).
    fn resolve(&self, lexicon: &mut Lexicon, staged: &mut Staged) {
        let mut occurrences = 0;
        for word in &mut staged.words {
            if word.key >> 120 != RESOLVED {
                word.key = resolved(lexicon.place_of_key(word.key, word.hash, self));
            }
            let place = word.key as u64;
            lexicon.prefetch_list(place);
            occurrences += pattern_count(place) as usize;
        }
        staged.occurrences = occurrences;
    }

    /// The key of a token's word (see [`Word::key`]); None when it is not a word (nothing left after
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
        if let Some(key) = crate::hash::inline_key(&lexicon.word) {
            return Some(key);
        }
        // Longer than a key: its place now.
        Some(resolved(lexicon.place_of_word(self)))
    }
}

/// Records which patterns the words of a turn (looked up, [`Matcher::resolve`]) match, in the turn's
/// table of patterns, and gathers the triggers of its words: those of the words whose triggers are not
/// copied in the lexicon as their patterns, in `shared`. Each word's patterns, alone triggers and pairs
/// are copied as blocks of a fixed length (the lexicon's [`SLACK`](crate::lexicon::SLACK) allows it),
/// with a loop only for the rare word that has more: a loop per word, ending after a different number
/// of rounds each time, costs a mispredicted branch per word.
fn read_turn(
    staged: &Staged,
    speaker: Speaker,
    lexicon: &mut Lexicon,
    words: &mut TurnWords,
    found: &mut Found,
    shared: &mut Vec<u32>,
) -> Triggered {
    /// The numbers copied at once: the most patterns, alone triggers or pairs most words have.
    const BLOCK: usize = 4;
    words.stamp = words.stamp.wrapping_add(1);
    if words.stamp == 0 {
        lexicon.clear_stamps();
        words.stamp = 1;
    }
    let stamp = words.stamp;
    room(&mut words.patterns, staged.occurrences + BLOCK);
    room(&mut words.positions, staged.occurrences + BLOCK);
    // The most numbers of each kind of trigger a word writes: it has at most `MAX_COPIED` triggers, and
    // writes at least a block.
    const ALONE: usize = if MAX_COPIED > BLOCK {
        MAX_COPIED
    } else {
        BLOCK
    };
    let numbers = lexicon.numbers();
    let (mut alone, mut pairs) = (0, 0);
    // Both trigger buffers hold at least this many numbers.
    let mut held = words.alone.len().min(words.pairs.len());
    let mut at = 0;
    for (position, word) in staged.words.iter().enumerate() {
        let place = word.key as u64;
        let count = pattern_count(place) as usize;
        let (first, mut block) = lexicon::read(numbers, place, stamp, speaker);
        let numbers = &*numbers;
        let head: &[u32; BLOCK] = numbers[first..first + BLOCK].try_into().unwrap();
        words.patterns[at..at + BLOCK].copy_from_slice(head);
        words.positions[at..at + BLOCK].copy_from_slice(&[position as u32; BLOCK]);
        if count > BLOCK {
            words.patterns[at..at + count].copy_from_slice(&numbers[first..first + count]);
            words.positions[at..at + count].fill(position as u32);
        }
        at += count;
        if block & SHARED != 0 {
            // Patterns shared by many phrases: their triggers are read from the matcher, once per
            // pattern, however many words of the turn match it.
            shared.extend_from_slice(&numbers[first..first + count]);
            block = NO_TRIGGERS as u64;
        }
        // Room checked per word, not made for the most a turn could take: a turn of many words would
        // take many times what its triggers need. One comparison covers both buffers.
        if alone + pairs + 2 * ALONE > held {
            let numbers = 2 * (alone + pairs + 2 * ALONE);
            room(&mut words.alone, numbers);
            room(&mut words.pairs, numbers);
            held = numbers;
        }
        let block = block as usize;
        let count = numbers[block] as usize;
        let from = &numbers[block + 1..];
        if count <= BLOCK {
            words.alone[alone..alone + BLOCK].copy_from_slice(&from[..BLOCK]);
        } else {
            words.alone[alone..alone + count].copy_from_slice(&from[..count]);
        }
        alone += count;
        let second = numbers[block + 1 + count] as usize * 2;
        let from = &numbers[block + 2 + count..];
        if second <= 2 * BLOCK {
            words.pairs[pairs..pairs + 2 * BLOCK].copy_from_slice(&from[..2 * BLOCK]);
        } else {
            words.pairs[pairs..pairs + second].copy_from_slice(&from[..second]);
        }
        pairs += second;
    }
    found.group(&words.patterns[..at], &words.positions[..at]);
    Triggered { alone, pairs }
}

/// Grows a buffer of [`TurnWords`] to at least `numbers` numbers.
fn room(buffer: &mut Vec<u32>, numbers: usize) {
    if buffer.len() < numbers {
        buffer.resize(numbers, 0);
    }
}

/// The first alternative of a phrase whose every sequence occurs in the turn, as the earliest start and
/// the latest end of the words of their leftmost occurrences.
fn evaluate(
    program: Program<'_>,
    words: &Staged,
    found: &Found,
    search: &mut Search,
) -> Option<(f64, f64)> {
    let (mut start, mut end) = (f64::INFINITY, f64::NEG_INFINITY);
    let time = |position: u32| {
        let word = &words.words[position as usize];
        (word.start, word.end)
    };
    if let Some(pattern) = program.one_word() {
        // The most common phrase: its pattern's first position.
        return found.first_position(pattern).map(time);
    }
    // Whether a sequence of the current alternative is missing: skip to the alternative's end.
    let mut missing = false;
    for seq in program.seqs() {
        if !missing && seq.patterns.len() == 1 && !seq.starts && !seq.ends {
            // One word anywhere (most sequences): its first position.
            match found.first_position(seq.patterns[0]) {
                Some(position) => {
                    let (s, e) = time(position);
                    start = start.min(s);
                    end = end.max(e);
                }
                None => missing = true,
            }
        } else if !missing {
            if leftmost(&seq, words.len() as u32, found, search) {
                for &position in &search.chosen {
                    let (s, e) = time(position);
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

/// Finds the leftmost occurrence of a sequence (smallest first position, then smallest second, ...) into
/// `search.chosen`. Works backwards first: which positions of each pattern can still complete the
/// sequence, then forwards, taking the smallest such position after the previous one.
fn leftmost(seq: &Seq<'_>, count: u32, found: &Found, search: &mut Search) -> bool {
    search.chosen.clear();
    let last_word = count.wrapping_sub(1);
    let patterns = seq.patterns;
    let k = patterns.len();
    if k == 0 {
        return false;
    }
    // A pattern's position that can end a sequence with `$`: the last word, if the pattern is there.
    let at_end = |pattern| {
        found
            .positions_of(pattern)
            .last()
            .filter(|&p| p == last_word)
    };
    if k == 1 {
        let position = if seq.ends {
            at_end(patterns[0])
        } else {
            found.first_position(patterns[0])
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
    search.last.clear();
    if seq.ends {
        search.last.extend(at_end(patterns[k - 1]));
    } else {
        search.last.extend(found.positions_of(patterns[k - 1]));
    }
    let list = &search.last[..];
    if list.is_empty() {
        return false;
    }
    if k == 2 {
        // Two patterns (most sequences of several): the first position with a second one after it within
        // reach, and that second one, in one pass over both lists.
        let mut j = 0;
        for p in found.positions_of(patterns[0]) {
            if seq.starts && p != 0 {
                return false;
            }
            while j < list.len() && list[j] <= p {
                j += 1;
            }
            let Some(&q) = list.get(j) else {
                return false;
            };
            if q - p <= seq.within {
                search.chosen.extend([p, q]);
                return true;
            }
        }
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
        for p in found.positions_of(patterns[i]) {
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
    use crate::compile::matcher_of;
    use crate::{MatcherBuilder, Phrase, Speaker, Turn};

    #[test]
    fn turn_stamps_wrap_around() {
        let mut builder = MatcherBuilder::new();
        builder.add(1, Phrase::parse("refund* please").unwrap(), None);
        builder.add(2, Phrase::parse("refund").unwrap(), None);
        let matcher = builder.build().unwrap();
        let turns: Vec<Turn> = [
            "refund please",
            "no",
            "refunds please refunds",
            "please",
            "refund refund",
        ]
        .iter()
        .enumerate()
        .map(|(i, text)| Turn::new(Speaker::Agent, i as f64, i as f64 + 1.0, *text))
        .collect();
        let mut scanner = matcher.scanner();
        // Both the table of the turn's patterns and the lexicon's marks of the turn wrap around.
        scanner.state.found.stamp = u32::MAX - 1;
        scanner.state.words.stamp = u32::MAX - 2;
        let found: Vec<(usize, u32)> = scanner
            .scan(&turns, 10.0)
            .iter()
            .map(|h| (h.turn, h.phrase))
            .collect();
        assert_eq!(found, [(0, 1), (0, 2), (2, 1), (4, 2)]);
        assert_eq!(scanner.state.found.stamp, 4);
        assert_eq!(scanner.state.words.stamp, 3);
        // The same hits again, with the stamps past the wrap.
        let again: Vec<(usize, u32)> = scanner
            .scan(&turns, 10.0)
            .iter()
            .map(|h| (h.turn, h.phrase))
            .collect();
        assert_eq!(again, found);
    }

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

    #[test]
    fn a_word_triggering_many_phrases_keeps_a_short_list() {
        // 40 phrases "zz" and 40 "zz & yy" (zz triggers them all, yy being as shared and numbered
        // after it), restricted to no speaker, agents, clients in turn.
        let mut builder = MatcherBuilder::new();
        let speaker = |i: u32| [None, Some(Speaker::Agent), Some(Speaker::Client)][i as usize % 3];
        for i in 0..40 {
            builder.add(i, Phrase::parse("zz").unwrap(), speaker(i));
            builder.add(100 + i, Phrase::parse("zz & yy").unwrap(), speaker(i));
        }
        let matcher = builder.build().unwrap();
        let mut scanner = matcher.scanner();
        let turns = [
            Turn::new(Speaker::Agent, 0.0, 1.0, "yy zz"),
            Turn::new(Speaker::Client, 1.0, 2.0, "zz"),
        ];
        let hits = scanner.scan(&turns, 2.0);
        let expected: Vec<(usize, u32)> = (0..40)
            .chain(100..140)
            .filter(|i| speaker(i % 100) != Some(Speaker::Client))
            .map(|i| (0, i))
            .chain(
                (0..40)
                    .filter(|i| speaker(*i) != Some(Speaker::Agent))
                    .map(|i| (1, i)),
            )
            .collect();
        let got: Vec<(usize, u32)> = hits.iter().map(|h| (h.turn, h.phrase)).collect();
        assert_eq!(got, expected);
        // The word's list holds its pattern, not its 80 triggers.
        let key = crate::hash::inline_key("zz").unwrap();
        let lexicon = &mut scanner.state.lexicon;
        let place = lexicon.place_of_key(key, lexicon.prefetch(key), &matcher);
        // Read by a turn that has not read it yet: it has triggers, which are not copied.
        let (first, block) =
            crate::lexicon::read(lexicon.numbers(), place, u32::MAX - 7, Speaker::Agent);
        assert_eq!(crate::lexicon::pattern_count(place), 1);
        let patterns = lexicon.patterns(place).to_vec();
        assert_eq!(lexicon.numbers()[first..first + 1], patterns);
        assert!(lexicon.triggers(block).is_none());
        assert_eq!(lexicon.patterns(place).len(), 1);
        // Read again by the same turn: its triggers are not given twice.
        let (_, again) =
            crate::lexicon::read(lexicon.numbers(), place, u32::MAX - 7, Speaker::Agent);
        assert_eq!(again, crate::lexicon::NO_TRIGGERS as u64);
    }

    #[test]
    fn a_pattern_shared_by_many_phrases_is_followed_once_per_turn() {
        // 40 phrases "a*" over a turn of 2,000 distinct words that all match it: their triggers are
        // gone through once, not once per word (which would be 80,000 programs to sort).
        let mut builder = MatcherBuilder::new();
        for i in 0..40 {
            builder.add(i, Phrase::parse("a*").unwrap(), None);
        }
        let matcher = builder.build().unwrap();
        let text: Vec<String> = (0..2000).map(|i| format!("a{i}")).collect();
        let turns = [Turn::new(Speaker::Agent, 0.0, 1.0, text.join(" "))];
        let mut scanner = matcher.scanner();
        for _ in 0..2 {
            let hits = scanner.scan(&turns, 1.0);
            assert_eq!(
                hits.iter().map(|h| h.phrase).collect::<Vec<_>>(),
                (0..40).collect::<Vec<_>>()
            );
            assert!(
                scanner.state.programs.capacity() < 1000,
                "{}",
                scanner.state.programs.capacity()
            );
        }
    }

    #[test]
    fn a_word_with_more_patterns_and_triggers_than_a_block_copies_them_all() {
        // "refunding" matches six patterns, each triggering a phrase alone and one with "please" as its
        // second pattern: more than the four of each that a word copies as one block.
        let patterns = ["refund*", "refun*", "*ding", "*ing", "refunding", "r*g"];
        let texts: Vec<String> = patterns
            .iter()
            .map(|p| p.to_string())
            .chain(patterns.iter().map(|p| format!("{p} please")))
            .chain(patterns.iter().map(|p| format!("please & {p}")))
            .collect();
        let phrases: Vec<Phrase> = texts.iter().map(|t| Phrase::parse(t).unwrap()).collect();
        let mut builder = MatcherBuilder::new();
        for (id, phrase) in phrases.iter().enumerate() {
            builder.add(id as u32, phrase.clone(), None);
        }
        let matcher = builder.build().unwrap();
        let turns: Vec<Turn> = ["refunding please", "please refunding", "so refunding, yes"]
            .iter()
            .enumerate()
            .map(|(i, text)| Turn::new(Speaker::Client, i as f64, i as f64 + 1.0, *text))
            .collect();
        let mut expected = Vec::new();
        for (index, turn) in turns.iter().enumerate() {
            for (id, phrase) in phrases.iter().enumerate() {
                if crate::reference::matches(phrase, None, turn, 3.0).is_some() {
                    expected.push((index, id as u32));
                }
            }
        }
        let got: Vec<(usize, u32)> = matcher
            .scanner()
            .scan(&turns, 3.0)
            .iter()
            .map(|h| (h.turn, h.phrase))
            .collect();
        // Every phrase in the first turn, the alone and `&` ones in the second, the alone ones in the
        // third.
        assert_eq!(expected.len(), 18 + 12 + 6);
        assert_eq!(got, expected);
    }

    #[test]
    fn a_long_turn_takes_room_for_the_triggers_it_has_not_for_the_most_it_could() {
        // 100,000 words, of which one distinct word triggers: the trigger buffers stay the size of a
        // few words' triggers, where room for the most each word could write would be 38 MB.
        let matcher = matcher_of(&["refund", "refund please"]);
        let mut text = vec!["refund"; 50_000].join(" x ");
        text.push_str(" please");
        let turns = [Turn::new(Speaker::Agent, 0.0, 1.0, text)];
        let mut scanner = matcher.scanner();
        assert_eq!(scanner.scan(&turns, 1.0).len(), 2);
        let words = &scanner.state.words;
        assert!(words.alone.len() < 1_000, "{}", words.alone.len());
        assert!(words.pairs.len() < 1_000, "{}", words.pairs.len());
    }

    #[test]
    fn a_pattern_found_many_times_keeps_every_position() {
        // "refund" 14 times, then once more right before "now": only that 15th position completes the
        // sequence.
        let matcher = matcher_of(&["refund now"]);
        let mut text = vec!["refund"; 14].join(" x ");
        text.push_str(" x refund now");
        let turns = [
            Turn::new(Speaker::Agent, 0.0, 1.0, text.clone()),
            Turn::new(Speaker::Agent, 1.0, 2.0, text.replace("now", "later")),
            Turn::new(Speaker::Agent, 2.0, 3.0, "refund now"),
        ];
        let mut scanner = matcher.scanner();
        let found: Vec<(usize, u32)> = scanner
            .scan(&turns, 3.0)
            .iter()
            .map(|h| (h.turn, h.phrase))
            .collect();
        assert_eq!(found, [(0, 0), (2, 0)]);
    }

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
