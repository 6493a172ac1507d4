//! Which programs a turn evaluates ([`Candidates::choose`]): those its words trigger alone, those they
//! trigger with a second pattern the turn has too, and those of its patterns whose triggers are read from
//! the matcher, each once and in the order of phrases, so that the hits need no sorting. The checks run
//! without a branch per trigger where they can: a turn has dozens, most of them passing or failing at
//! random, and a mispredicted branch costs more than the check.

use super::turn_words::{Triggered, TurnWords};
use crate::compile::Matcher;
use crate::found::Found;
use crate::numbers::{PatternId, ProgramOffset};
use crate::turn::Speaker;
use prefetch::prefetch;

/// The programs of the turn being evaluated, and the buffer they are chosen with. Both only grow, so
/// that in the long run nothing is zeroed, copied or reallocated per turn.
#[derive(Default)]
pub(super) struct Candidates {
    /// The programs triggered with a second pattern whose second pattern the turn has, in its first
    /// entries.
    with_second: Vec<ProgramOffset>,
    /// The programs to evaluate on the turn.
    programs: Vec<ProgramOffset>,
}

impl Candidates {
    /// About how many bytes its buffers hold.
    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of::<ProgramOffset>()
            * (self.with_second.capacity() + self.programs.capacity())
    }

    /// The programs to evaluate on a turn of `speaker`, from what its words found (`words` and
    /// `triggered`, as `read_turn` left them, `found` its patterns), by offset, each once. Programs are in
    /// the order of phrases, which is by id, then by the order phrases were added; a phrase triggered
    /// twice (by two words, or two alternatives) is evaluated once. Each program is asked for as it is
    /// found, before they are sorted.
    #[inline]
    pub(super) fn choose(
        &mut self,
        matcher: &Matcher,
        speaker: Speaker,
        words: &mut TurnWords,
        triggered: Triggered,
        found: &Found,
    ) -> &[ProgramOffset] {
        // Each program is written after those kept so far, and kept by counting it.
        let with_second = &mut self.with_second;
        if with_second.len() < triggered.paired {
            with_second.resize(triggered.paired, ProgramOffset::default());
        }
        let mut kept = 0;
        for pair in &words.paired[..triggered.paired] {
            with_second[kept] = pair.program;
            kept += usize::from(found.has(pair.also));
        }
        let programs = &mut self.programs;
        programs.clear();
        programs.extend_from_slice(&words.alone[..triggered.alone]);
        programs.extend_from_slice(&with_second[..kept]);
        for &program in programs.iter() {
            prefetch(matcher.program.as_ptr().wrapping_add(program.index()));
        }
        let shared = &mut words.shared;
        if !shared.is_empty() {
            shared.sort_unstable();
            shared.dedup();
            for &pattern in shared.iter() {
                for trigger in matcher.triggered(pattern) {
                    if trigger.allows(speaker)
                        && (trigger.also == PatternId::NONE || found.has(trigger.also))
                    {
                        programs.push(trigger.program());
                    }
                }
            }
        }
        programs.sort_unstable();
        programs.dedup();
        programs
    }
}

#[cfg(test)]
mod tests {
    use crate::{MatcherBuilder, Phrase, Speaker, Turn};

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
            let programs = &scanner.state.candidates.programs;
            assert!(programs.capacity() < 1000, "{}", programs.capacity());
        }
    }
}
