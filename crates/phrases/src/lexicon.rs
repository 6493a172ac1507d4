//! The words a [`crate::Scanner`] has met, each with all a scan needs of it in one list: its patterns
//! (found once, on the first meeting: with wildcard patterns that takes several probes and pattern
//! matches) and the triggers of those patterns, copied from the matcher. A word of a turn then costs the
//! entry of its word and, when it has patterns, its list, where following the matcher's tables from
//! pattern to triggers cost a cache miss at each step. The calls of a company share most of their words,
//! so the lists stay few.

use std::hint::select_unpredictable;

use crate::compile::Matcher;
use crate::glob::glob_match;
use crate::hash::{Seed, WordMap};
use crate::numbers::PatternId;
use crate::turn::Speaker;

/// Where a word's list is, as the lexicon hands it out (a place): the offset of the list in the low 32
/// bits, the number of the word's patterns above them, so that a turn's pairs of pattern and position are
/// counted without reading the lists.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct Place(u64);

impl Place {
    /// The place of a word without patterns: the empty list that starts `lists`, with no patterns and no
    /// triggers, read like any other so that the scan has no branch for it.
    pub(crate) const NO_PATTERNS: Place = Place(0);

    fn new(offset: usize, patterns: usize) -> Place {
        Place(offset as u64 | ((patterns as u64) << 32))
    }

    /// The offset in `lists` of its list.
    #[inline]
    fn offset(self) -> usize {
        self.0 as u32 as usize
    }

    /// How many patterns its word has (none for [`Place::NO_PATTERNS`]).
    #[inline]
    pub(crate) fn pattern_count(self) -> usize {
        (self.0 >> 32) as usize
    }

    /// Its bits, to be kept in a wider key.
    #[inline]
    pub(crate) const fn to_bits(self) -> u64 {
        self.0
    }

    /// The place of [`Place::to_bits`].
    #[inline]
    pub(crate) const fn from_bits(bits: u64) -> Place {
        Place(bits)
    }
}

/// Where [`read`] says a word's triggers for its turn are in the lexicon's numbers ([`Triggers`]): the
/// offset of their alone count, or, when they are not copied (see [`MANY`]), the word's place marked as
/// shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct TriggersAt(u64);

impl TriggersAt {
    /// The triggers of a word without any for the turn: an alone count and a second count of 0, after the
    /// empty list's head.
    pub(crate) const NONE: TriggersAt = TriggersAt(NO_TRIGGERS as u64);

    /// Set for a word whose triggers are not copied: the rest is its place.
    const SHARED: u64 = 1 << 63;

    /// Whether its word's triggers are not copied in the lexicon: read them from the matcher
    /// (`Matcher::triggered`) for each of the word's patterns.
    #[inline]
    pub(crate) fn is_shared(self) -> bool {
        self.0 & Self::SHARED != 0
    }

    /// The offset of the triggers' alone count in the lexicon's numbers, when they are copied.
    #[inline]
    pub(crate) fn offset(self) -> usize {
        self.0 as usize
    }
}

/// The offset in `lists` of [`TriggersAt::NONE`].
const NO_TRIGGERS: usize = PATTERNS + 1;

/// The offset of the first list learnt, after the empty list and [`NO_TRIGGERS`].
const FIRST_LIST: usize = NO_TRIGGERS + 2;

/// How many zeros follow the last list: a scan copies a word's first few patterns, alone triggers and
/// pairs of triggers as blocks of a fixed length ([`Lexicon::numbers`]), whatever their number, rather
/// than in loops whose ends, different for each word, the processor mispredicts.
pub(crate) const SLACK: usize = 16;

/// The most distinct words, numbers in their lists and bytes of words longer than an inline key a lexicon
/// keeps; past any of them the scanner starts a new one.
const MAX_WORDS: usize = 1 << 20;
const MAX_NUMBERS: usize = 1 << 24;
const MAX_LONG_BYTES: usize = 1 << 26;

pub(crate) struct Lexicon {
    /// A buffer for normalizing a token.
    pub(crate) word: String,
    /// Each word met: its place.
    known: WordMap<Place>,
    /// From each word's offset: how many times a scan read it, the stamp of the last turn that read it,
    /// how many numbers its triggers for an agent's turn take, its number of patterns, the patterns, then
    /// its triggers for an agent's turn and for a client's ([`Triggers`]).
    lists: Vec<u32>,
    /// The bytes of the words kept that are longer than an inline key.
    long_bytes: usize,
    /// The most distinct words it keeps: [`MAX_WORDS`], lower in tests.
    max_words: usize,
    /// What the scan under way may still spend trying wildcard patterns on new words.
    pub(crate) budget: Budget,
}

/// The wildcard matching a scan may spend learning new words, in steps of `glob_match`: an
/// application's words that start and end with a wildcard are tried on every new word, at a cost that
/// grows with both lengths. Once it is spent no pattern is tried any more, the words learned since are
/// incomplete, and the scan is over its budget ([`crate::Scanner::scan_within`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) left: u64,
    pub(crate) spent: bool,
}

impl Budget {
    pub(crate) fn of(steps: u64) -> Budget {
        Budget {
            left: steps,
            spent: false,
        }
    }
}

impl Lexicon {
    pub(crate) fn new(seed: Seed) -> Self {
        Lexicon {
            word: String::new(),
            known: WordMap::with_seed(seed),
            lists: vec![0; FIRST_LIST + SLACK],
            long_bytes: 0,
            max_words: MAX_WORDS,
            budget: Budget::of(u64::MAX),
        }
    }

    /// A lexicon full past `max_words` distinct words, to test what happens when one is replaced.
    #[cfg(test)]
    pub(crate) fn with_max_words(seed: Seed, max_words: usize) -> Self {
        Lexicon {
            max_words,
            ..Lexicon::new(seed)
        }
    }

    /// A new, empty lexicon with the same limits.
    pub(crate) fn renewed(&self, seed: Seed) -> Self {
        Lexicon {
            max_words: self.max_words,
            budget: self.budget,
            ..Lexicon::new(seed)
        }
    }

    /// How many words it keeps.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.known.len()
    }

    /// About how many bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.known.table_bytes()
            + self.long_bytes
            + 4 * self.lists.capacity()
            + self.word.capacity()
    }

    /// Whether it holds so much that it should be replaced by a new one.
    pub(crate) fn is_full(&self) -> bool {
        self.known.len() > self.max_words
            || self.lists.len() > MAX_NUMBERS
            || self.long_bytes > MAX_LONG_BYTES
    }

    /// Asks for the entry of an inline key; its hash, for [`Self::place_of_key`].
    #[inline]
    pub(crate) fn prefetch(&self, key: u128) -> u64 {
        self.known.prefetch(key)
    }

    /// Asks for the head of the list at `place` and the line after it: a list of a few patterns and their
    /// triggers takes one or two lines.
    #[inline]
    pub(crate) fn prefetch_list(&self, place: Place) {
        let head = self.lists.as_ptr().wrapping_add(place.offset());
        prefetch::prefetch(head);
        prefetch::prefetch(head.wrapping_add(16));
    }

    /// The place of the word of an inline key (see `hash::inline_key`) not empty, whose hash
    /// [`Self::prefetch`] gave, learning it when it is new. A
    /// word without patterns is kept only when the matcher has wildcard patterns: without them, finding
    /// its patterns again is one lookup, as cheap as the lexicon's, and keeping it would only take room.
    #[inline]
    pub(crate) fn place_of_key(&mut self, key: u128, hash: u64, matcher: &Matcher) -> Place {
        if let Some(&place) = self.known.get_inline_hashed(key, hash) {
            return place;
        }
        crate::hash::with_inline_word(key, |word| {
            let place = learn(matcher, word, &mut self.lists, &mut self.budget);
            if place != Place::NO_PATTERNS || matcher.has_wildcards() {
                self.known.insert(word, place);
            }
            place
        })
    }

    /// The place of the word in the buffer `word` (longer than an inline key), learning it when it is
    /// new. It is kept on the same terms as a short word, and the bytes of those kept are counted
    /// ([`Self::is_full`]), so that a transcript of endless long made-up words starts a new lexicon
    /// rather than filling memory.
    pub(crate) fn place_of_word(&mut self, matcher: &Matcher) -> Place {
        if let Some(&place) = self.known.get(&self.word) {
            return place;
        }
        let place = learn(matcher, &self.word, &mut self.lists, &mut self.budget);
        if place != Place::NO_PATTERNS || matcher.has_wildcards() {
            self.known.insert(&self.word, place);
            self.long_bytes += self.word.len();
        }
        place
    }

    /// The numbers of all lists, followed by [`SLACK`] zeros, to [`read`] words in them.
    #[inline]
    pub(crate) fn numbers(&mut self) -> &mut [u32] {
        &mut self.lists
    }

    /// Forgets which turn read each word last (when the turns' stamps wrap around).
    pub(crate) fn clear_stamps(&mut self) {
        self.lists[STAMP] = 0;
        let mut at = FIRST_LIST;
        while at < self.lists.len() - SLACK {
            self.lists[at + STAMP] = 0;
            at = self.next_list(at);
        }
    }

    /// The triggers where [`read`] said; None when its word's patterns trigger too many phrases to be
    /// copied (read them from the matcher, `Matcher::triggered`).
    #[cfg(test)]
    pub(crate) fn triggers(&self, at: TriggersAt) -> Option<Triggers<'_>> {
        if at.is_shared() {
            return None;
        }
        Some(Triggers::at(&self.lists[at.offset()..]))
    }

    /// The patterns of the word at `place`.
    #[cfg(test)]
    pub(crate) fn patterns(&self, place: Place) -> &[u32] {
        let at = place.offset();
        &self.lists[at + PATTERNS + 1..at + PATTERNS + 1 + self.lists[at + PATTERNS] as usize]
    }

    /// The offset of the list after the one at `at`.
    fn next_list(&self, at: usize) -> usize {
        let agent = at + PATTERNS + 1 + self.lists[at + PATTERNS] as usize;
        match self.lists[at + TRIGGERS] {
            0 | MANY => agent,
            numbers => {
                let client = agent + numbers as usize;
                client + Triggers::at(&self.lists[client..]).len()
            }
        }
    }

    /// Adds to `counts[p]` how many words read matched pattern `p`.
    pub(crate) fn add_counts(&self, counts: &mut [u32]) {
        let mut at = FIRST_LIST;
        while at < self.lists.len() - SLACK {
            let reads = self.lists[at + READS];
            let patterns = self.lists[at + PATTERNS] as usize;
            for &pattern in &self.lists[at + PATTERNS + 1..at + PATTERNS + 1 + patterns] {
                if let Some(count) = counts.get_mut(pattern as usize) {
                    *count = count.saturating_add(reads);
                }
            }
            at = self.next_list(at);
        }
    }
}

/// Counts one more reading of the word at `place` of the lexicon's `numbers` ([`Lexicon::numbers`]) by
/// the turn of `stamp`, whose speaker is `speaker`: the offset in `numbers` of its patterns
/// (`place.pattern_count()` of them), and where its triggers for that speaker are: [`TriggersAt::NONE`]
/// when it has none or the turn has read it already, shared ([`TriggersAt::is_shared`]) when they are
/// not copied. Triggers are an alone count, the programs triggered alone, a second count and that many
/// pairs of a program and the pattern that must be present too.
#[inline]
pub(crate) fn read(
    numbers: &mut [u32],
    place: Place,
    stamp: u32,
    speaker: Speaker,
) -> (usize, TriggersAt) {
    let at = place.offset();
    // The head taken apart at once: one check of the list's length where each number read by its
    // index had its own.
    let [reads, last_stamp, triggers, count, ..] = &mut numbers[at..] else {
        unreachable!("a list holds its head");
    };
    *reads = reads.saturating_add(1);
    let first_in_turn = *last_stamp != stamp;
    *last_stamp = stamp;
    let client = usize::from(speaker == Speaker::Client);
    let own =
        TriggersAt((at + PATTERNS + 1 + *count as usize + client * *triggers as usize) as u64);
    // Selected without a branch but for the rare shared triggers (shared words read again by the turn
    // fall through to the select, false for them): whether a word has triggers, and whether its turn
    // read it before, vary from word to word.
    if *triggers == MANY && first_in_turn {
        return (at + PATTERNS + 1, TriggersAt(TriggersAt::SHARED | place.0));
    }
    let block = select_unpredictable(first_in_turn & (*triggers != 0), own, TriggersAt::NONE);
    (at + PATTERNS + 1, block)
}

/// Where a list holds how many times a scan read its word, the stamp of the last turn that did, how many
/// numbers its triggers for an agent's turn take (those for a client's follow them; 0 when it has no
/// triggers), and its number of patterns (the patterns follow).
const READS: usize = 0;
const STAMP: usize = 1;
const TRIGGERS: usize = 2;
const PATTERNS: usize = 3;
// `read` takes a head apart in this order.
const _: () = assert!(READS == 0 && STAMP == 1 && TRIGGERS == 2 && PATTERNS == 3);

/// In place of how many numbers a word's triggers take: its patterns trigger more than
/// [`MAX_COPIED`] phrases, which are not copied. A word's list then stays about as short as its patterns,
/// however many phrases share them (a pattern common to thousands of phrases, met in a million words).
const MANY: u32 = u32::MAX;
pub(crate) const MAX_COPIED: usize = 32;

/// The triggers of a word for the turns of one speaker, those of phrases restricted to the other left
/// out: the programs of the phrases it triggers alone (they have one distinct pattern), then the phrases
/// it triggers with a second pattern that must be present too, as (program, pattern). In `lists`, the
/// number of the first, the first, the number of the second, the second.
pub(crate) struct Triggers<'a> {
    pub(crate) alone: &'a [u32],
    /// Two numbers each.
    pub(crate) with_second: &'a [u32],
}

impl<'a> Triggers<'a> {
    #[inline]
    fn at(numbers: &'a [u32]) -> Self {
        let alone = numbers[0] as usize;
        let with_second = numbers[1 + alone] as usize;
        Triggers {
            alone: &numbers[1..1 + alone],
            with_second: &numbers[2 + alone..2 + alone + 2 * with_second],
        }
    }

    /// How many numbers they take in `lists`.
    fn len(&self) -> usize {
        2 + self.alone.len() + self.with_second.len()
    }
}

/// Appends the list of a word met for the first time to `lists`: its place there, or
/// [`Place::NO_PATTERNS`] when no pattern matches it.
fn learn(matcher: &Matcher, word: &str, lists: &mut Vec<u32>, budget: &mut Budget) -> Place {
    lists.truncate(lists.len() - SLACK);
    let place = learn_list(matcher, word, lists, budget);
    lists.extend([0; SLACK]);
    place
}

/// [`learn`], on `lists` without its slack.
fn learn_list(matcher: &Matcher, word: &str, lists: &mut Vec<u32>, budget: &mut Budget) -> Place {
    let start = lists.len();
    lists.extend([0; PATTERNS + 1]);
    matcher.patterns_of(word, lists, budget);
    let count = lists.len() - start - PATTERNS - 1;
    if count == 0 {
        lists.truncate(start);
        return Place::NO_PATTERNS;
    }
    lists[start + PATTERNS] = count as u32;
    let place = Place::new(start, count);
    let patterns = start + PATTERNS + 1..start + PATTERNS + 1 + count;
    let triggered: usize = patterns
        .clone()
        .map(|i| matcher.triggered(PatternId::new(lists[i])).len())
        .sum();
    if triggered > MAX_COPIED {
        lists[start + TRIGGERS] = MANY;
        return place;
    }
    let first = lists.len();
    let mut agent = 0;
    for speaker in [Speaker::Agent, Speaker::Client] {
        for alone in [true, false] {
            let at = lists.len();
            lists.push(0);
            for i in patterns.clone() {
                for trigger in matcher.triggered(PatternId::new(lists[i])) {
                    if trigger.allows(speaker) && (trigger.also == PatternId::NONE) == alone {
                        lists.push(trigger.program().number());
                        if !alone {
                            lists.push(trigger.also.number());
                        }
                    }
                }
            }
            let numbers = lists.len() - at - 1;
            lists[at] = if alone { numbers } else { numbers / 2 } as u32;
        }
        if speaker == Speaker::Agent {
            agent = lists.len() - first;
        }
    }
    // Four numbers when the word triggers nothing: then none at all.
    if lists.len() - first == 4 {
        lists.truncate(first);
        agent = 0;
    }
    lists[start + TRIGGERS] = agent as u32;
    place
}

impl Matcher {
    /// The number of every pattern matching a normalized word, appended to `out`: its literal, and the
    /// wildcard patterns sharing its prefix or suffix or having neither, as long as `budget` lasts.
    fn patterns_of(&self, word: &str, out: &mut Vec<u32>, budget: &mut Budget) {
        if let Some(&pattern) = self.literals.get(word) {
            out.push(pattern.number());
        }
        let wildcards = &self.wildcards;
        let mut try_pattern = |index: u32| {
            if budget.left == 0 {
                budget.spent = true;
                return;
            }
            let (pattern, text) = &wildcards.texts[index as usize];
            let mut steps = 0;
            if glob_match(text, word, &mut steps) {
                out.push(pattern.number());
            }
            budget.left = budget.left.saturating_sub(steps);
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
