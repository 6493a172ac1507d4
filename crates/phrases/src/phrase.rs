//! A parsed phrase: the tree the parser builds and both matchers read, and its canonical text (Display),
//! which parses back to the same phrase.

use std::fmt;
use std::str::FromStr;

use crate::error::PhraseError;

/// A parsed phrase (docs/phrases.md): an optional exclude mark, alternatives (`|`) of conjunctions (`&`) of
/// word sequences, and optional time windows.
///
/// Its `Display` is the canonical text: lowercased words, one space between words, `" | "` and `" & "`
/// between operands, `~N` only when N > 1, then `~s<T` and `~e<T`. That text parses back to an equal
/// phrase whenever it fits in [`MAX_PHRASE_CHARS`](crate::MAX_PHRASE_CHARS) characters (it can be longer
/// than the text given when that had no spaces around the operators).
#[derive(Debug, Clone, PartialEq)]
pub struct Phrase {
    pub(crate) exclude: bool,
    /// `|` operands in textual order; each is the `&` operands (sequences) in textual order.
    pub(crate) alternatives: Vec<Vec<Seq>>,
    /// `~s<T`: the turn starts before T seconds into the call.
    pub(crate) start_window: Option<f64>,
    /// `~e<T`: the turn starts at or after the call's duration minus T seconds.
    pub(crate) end_window: Option<f64>,
}

/// Word patterns matched in order on a turn's words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seq {
    /// `^`: the first pattern is on the turn's first word.
    pub(crate) starts: bool,
    /// `$`: the last pattern is on the turn's last word.
    pub(crate) ends: bool,
    pub(crate) words: Vec<Pattern>,
    /// `~N`: each pattern's word is at most this many words after the previous one's (1 = adjacent).
    pub(crate) within: u32,
}

/// One word pattern, lowercased; `*` and `?` are wildcards.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Pattern {
    pub(crate) text: String,
}

impl Pattern {
    pub(crate) fn has_wildcards(&self) -> bool {
        self.text.contains(['*', '?'])
    }
}

impl Phrase {
    /// Parses a phrase's text (docs/phrases.md).
    pub fn parse(text: &str) -> Result<Phrase, PhraseError> {
        crate::parse::parse(text)
    }

    /// Whether the phrase was written with a leading `-`: its matches lower a turn's score.
    pub fn is_exclude(&self) -> bool {
        self.exclude
    }

    /// The `~s<T` window, in seconds.
    pub fn start_window(&self) -> Option<f64> {
        self.start_window
    }

    /// The `~e<T` window, in seconds.
    pub fn end_window(&self) -> Option<f64> {
        self.end_window
    }

    /// The text of every word pattern of the phrase, each sequence's in order, `*` and `?` as written:
    /// what the matcher compiles, for callers that bound how much of it an application may hold.
    pub fn word_patterns(&self) -> impl Iterator<Item = &str> {
        self.alternatives
            .iter()
            .flatten()
            .flat_map(|seq| seq.words.iter())
            .map(|pattern| pattern.text.as_str())
    }
}

impl FromStr for Phrase {
    type Err = PhraseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Phrase::parse(text)
    }
}

impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exclude {
            f.write_str("-")?;
        }
        for (i, alternative) in self.alternatives.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            for (j, seq) in alternative.iter().enumerate() {
                if j > 0 {
                    f.write_str(" & ")?;
                }
                write!(f, "{seq}")?;
            }
        }
        if let Some(t) = self.start_window {
            write!(f, " ~s<{t}")?;
        }
        if let Some(t) = self.end_window {
            write!(f, " ~e<{t}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.starts {
            f.write_str("^")?;
        }
        for (i, word) in self.words.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(&word.text)?;
        }
        if self.ends {
            f.write_str("$")?;
        }
        if self.within > 1 {
            write!(f, "~{}", self.within)?;
        }
        Ok(())
    }
}
