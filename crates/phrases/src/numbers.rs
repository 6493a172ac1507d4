//! What the `u32`s of the matcher's flat buffers stand for, each under a type of its own: a pattern's
//! number, the offset of a phrase's program, a word's position in its turn. The buffers of a program and
//! of a lexicon list hold several kinds of number side by side, so they stay `u32`s; what is read out of
//! them, and every buffer of one kind, is typed, so that a pattern is never taken for a position or a
//! program. Each type is a `u32` in memory, and its accessors compile to nothing.

use std::ops::Sub;

/// The number of a distinct word pattern of a matcher, from 0 in the order the phrases first use them:
/// the index of its slot in a turn's table of patterns ([`crate::found::Found`]) and of its row of triggers
/// ([`crate::Matcher`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
pub(crate) struct PatternId(u32);

impl PatternId {
    /// No pattern: the second pattern of a trigger that needs none. Above every pattern of a matcher, so
    /// no turn has it.
    pub(crate) const NONE: PatternId = PatternId(u32::MAX);

    #[inline]
    pub(crate) const fn new(number: u32) -> Self {
        PatternId(number)
    }

    /// Its number, as the buffers hold it.
    #[inline]
    pub(crate) const fn number(self) -> u32 {
        self.0
    }

    /// Its number as an index of the tables by pattern.
    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a phrase's program starts in the matcher's array of programs (`Matcher::program`, read with
/// [`crate::program::Program::at`]). Programs are laid out by phrase id, so offsets order phrases as hits
/// are ordered.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
pub(crate) struct ProgramOffset(u32);

impl ProgramOffset {
    #[inline]
    pub(crate) const fn new(offset: u32) -> Self {
        ProgramOffset(offset)
    }

    /// Its offset, as the buffers hold it.
    #[inline]
    pub(crate) const fn number(self) -> u32 {
        self.0
    }

    /// Its offset as an index of the array of programs.
    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A word's position in its turn: its index among the turn's words as they were read (tokens of its text,
/// or of its timed words), from 0.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
pub(crate) struct Position(u32);

impl Position {
    /// The turn's first word, where a sequence with `^` starts.
    pub(crate) const FIRST: Position = Position(0);

    #[inline]
    pub(crate) const fn new(index: u32) -> Self {
        Position(index)
    }

    /// The position of the last of `words` words (for none, a position no word has).
    #[inline]
    pub(crate) const fn last_of(words: usize) -> Self {
        Position((words as u32).wrapping_sub(1))
    }

    /// Its index as a number, for tests.
    #[cfg(test)]
    pub(crate) const fn number(self) -> u32 {
        self.0
    }

    /// Its index among the turn's words.
    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// How many words after `earlier` a later position is (what `~N` bounds).
impl Sub for Position {
    type Output = u32;

    #[inline]
    fn sub(self, earlier: Position) -> u32 {
        self.0 - earlier.0
    }
}
