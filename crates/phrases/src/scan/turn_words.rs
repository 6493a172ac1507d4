//! What the words of the turn being evaluated found in their lexicon lists ([`read_turn`]): the pattern
//! and position of each word matching a pattern, grouped into the turn's table of patterns, and the
//! programs its words trigger. Each word copies its numbers as blocks of a fixed length, with a loop only
//! for the rare word that has more: a loop per word, ending after a different number of rounds each time,
//! costs a mispredicted branch per word.

use super::staged::Staged;
use crate::found::Found;
use crate::lexicon::{self, Lexicon, TriggersAt, MAX_COPIED};
use crate::numbers::{PatternId, Position, ProgramOffset};
use crate::turn::Speaker;

/// A program triggered by a word with the second pattern that must be present too. Laid out as the
/// lexicon lists them, program first, so that copying a block of them is a plain copy.
#[derive(Debug, Default, Clone, Copy)]
#[repr(C)]
pub(super) struct Paired {
    pub(super) program: ProgramOffset,
    pub(super) also: PatternId,
}

impl Paired {
    /// The pair of the lexicon's numbers `program` and `also`.
    #[inline]
    fn of(program: u32, also: u32) -> Self {
        Paired {
            program: ProgramOffset::new(program),
            also: PatternId::new(also),
        }
    }
}

/// What the turn being evaluated has found of its words ([`read_turn`]). Its buffers only grow, and each
/// holds a few entries past what the turn filled: words write their patterns and triggers as blocks of a
/// fixed length, the next word's overwriting what was past this one's.
#[derive(Default)]
pub(super) struct TurnWords {
    /// The pattern and the position of each word matching a pattern, by position, side by side.
    patterns: Vec<PatternId>,
    positions: Vec<Position>,
    /// The programs triggered alone by the turn's words, in its first [`Triggered::alone`].
    pub(super) alone: Vec<ProgramOffset>,
    /// The programs triggered with a second pattern by the turn's words, in its first
    /// [`Triggered::paired`].
    pub(super) paired: Vec<Paired>,
    /// The turn's patterns whose triggers are not copied in the lexicon (too many), once per word
    /// matching them.
    pub(super) shared: Vec<PatternId>,
    /// Marks the turn in the lexicon's lists, so that the triggers of a word read twice in it are taken
    /// once; never 0.
    pub(super) stamp: u32,
}

impl TurnWords {
    /// About how many bytes its buffers hold.
    pub(super) fn bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<PatternId>() * (self.patterns.capacity() + self.shared.capacity())
            + size_of::<Position>() * self.positions.capacity()
            + size_of::<ProgramOffset>() * self.alone.capacity()
            + size_of::<Paired>() * self.paired.capacity()
    }
}

/// What [`read_turn`] found: how many entries of [`TurnWords::alone`] and [`TurnWords::paired`] the turn
/// filled.
#[derive(Clone, Copy)]
pub(super) struct Triggered {
    pub(super) alone: usize,
    pub(super) paired: usize,
}

/// Reads the lists of the words of a turn (looked up, [`Staged::resolve`]) into `words`: records which
/// patterns they match in the turn's table of patterns, `found`, and gathers their triggers, those of the
/// words whose triggers are not copied in the lexicon as their patterns, in [`TurnWords::shared`]. Each
/// word's patterns, alone triggers and pairs are copied as blocks of a fixed length (the lexicon's
/// [`SLACK`](crate::lexicon::SLACK) allows it).
#[inline]
pub(super) fn read_turn(
    staged: &Staged,
    speaker: Speaker,
    lexicon: &mut Lexicon,
    words: &mut TurnWords,
    found: &mut Found,
) -> Triggered {
    /// The entries copied at once: the most patterns, alone triggers or pairs most words have.
    const BLOCK: usize = 4;
    words.stamp = words.stamp.wrapping_add(1);
    if words.stamp == 0 {
        lexicon.clear_stamps();
        words.stamp = 1;
    }
    let stamp = words.stamp;
    words.shared.clear();
    room(&mut words.patterns, staged.occurrences + BLOCK);
    room(&mut words.positions, staged.occurrences + BLOCK);
    // The most entries of each kind of trigger a word writes: it has at most `MAX_COPIED` triggers, and
    // writes at least a block.
    const ALONE: usize = if MAX_COPIED > BLOCK {
        MAX_COPIED
    } else {
        BLOCK
    };
    let numbers = lexicon.numbers();
    let (mut alone, mut paired) = (0, 0);
    // Both trigger buffers hold at least this many entries.
    let mut held = words.alone.len().min(words.paired.len());
    let mut at = 0;
    for (position, word) in staged.words.iter().enumerate() {
        let place = word.key.place();
        let count = place.pattern_count();
        let position = Position::new(position as u32);
        let (first, mut triggers) = lexicon::read(numbers, place, stamp, speaker);
        let numbers = &*numbers;
        let head: [u32; BLOCK] = numbers[first..first + BLOCK].try_into().unwrap();
        words.patterns[at..at + BLOCK].copy_from_slice(&head.map(PatternId::new));
        words.positions[at..at + BLOCK].copy_from_slice(&[position; BLOCK]);
        if count > BLOCK {
            copy(
                &mut words.patterns[at..at + count],
                &numbers[first..first + count],
                PatternId::new,
            );
            words.positions[at..at + count].fill(position);
        }
        at += count;
        if triggers.is_shared() {
            // Patterns shared by many phrases: their triggers are read from the matcher, once per
            // pattern, however many words of the turn match it.
            let patterns = &numbers[first..first + count];
            words
                .shared
                .extend(patterns.iter().map(|&pattern| PatternId::new(pattern)));
            triggers = TriggersAt::NONE;
        }
        // Room checked per word, not made for the most a turn could take: a turn of many words would
        // take many times what its triggers need. One comparison covers both buffers.
        if alone + paired + ALONE > held {
            let entries = 2 * (alone + paired + ALONE);
            room(&mut words.alone, entries);
            room(&mut words.paired, entries);
            held = entries;
        }
        let block = triggers.offset();
        let count = numbers[block] as usize;
        let from = &numbers[block + 1..];
        if count <= BLOCK {
            let head: [u32; BLOCK] = from[..BLOCK].try_into().unwrap();
            words.alone[alone..alone + BLOCK].copy_from_slice(&head.map(ProgramOffset::new));
        } else {
            copy(
                &mut words.alone[alone..alone + count],
                &from[..count],
                ProgramOffset::new,
            );
        }
        alone += count;
        let second = numbers[block + 1 + count] as usize;
        let from = &numbers[block + 2 + count..];
        if second <= BLOCK {
            let head: &[u32; 2 * BLOCK] = from[..2 * BLOCK].try_into().unwrap();
            let head: [Paired; BLOCK] =
                std::array::from_fn(|i| Paired::of(head[2 * i], head[2 * i + 1]));
            words.paired[paired..paired + BLOCK].copy_from_slice(&head);
        } else {
            let to = &mut words.paired[paired..paired + second];
            for (pair, numbers) in to.iter_mut().zip(from[..2 * second].chunks_exact(2)) {
                *pair = Paired::of(numbers[0], numbers[1]);
            }
        }
        paired += second;
    }
    found.group(&words.patterns[..at], &words.positions[..at]);
    Triggered { alone, paired }
}

/// Copies numbers of the lexicon into a buffer of what they are, as many as it holds.
#[inline]
fn copy<T>(to: &mut [T], from: &[u32], of: impl Fn(u32) -> T) {
    for (to, &number) in to.iter_mut().zip(from) {
        *to = of(number);
    }
}

/// Grows a buffer of [`TurnWords`] to at least `entries` entries.
fn room<T: Copy + Default>(buffer: &mut Vec<T>, entries: usize) {
    if buffer.len() < entries {
        buffer.resize(entries, T::default());
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::matcher_of;
    use crate::lexicon::TriggersAt;
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
        let (first, triggers) =
            crate::lexicon::read(lexicon.numbers(), place, u32::MAX - 7, Speaker::Agent);
        assert_eq!(place.pattern_count(), 1);
        let patterns = lexicon.patterns(place).to_vec();
        assert_eq!(lexicon.numbers()[first..first + 1], patterns);
        assert!(lexicon.triggers(triggers).is_none());
        assert_eq!(lexicon.patterns(place).len(), 1);
        // Read again by the same turn: its triggers are not given twice.
        let (_, again) =
            crate::lexicon::read(lexicon.numbers(), place, u32::MAX - 7, Speaker::Agent);
        assert_eq!(again, TriggersAt::NONE);
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
        assert!(words.paired.len() < 1_000, "{}", words.paired.len());
    }
}
