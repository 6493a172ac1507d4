//! What phrases are matched against: the speaker turns (utterances) of one call, and where in a turn a
//! phrase matched.

/// Who speaks a turn; also the optional restriction of a phrase to one side of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Speaker {
    Agent,
    Client,
}

/// One word of a turn with its own times, as a transcript's `words` give them.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedWord {
    pub text: String,
    pub start: f64,
    pub end: f64,
}

/// One speaker turn (utterance) of a call: its speaker, start and end in seconds from the call's start, its
/// text and, when the transcript has them, its words with their times.
///
/// When `words` is present and not empty, the turn's words are taken from it (each with its own times) and
/// `text` is not read; otherwise they are the words of `text`, each with the turn's start and end.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub speaker: Speaker,
    pub start: f64,
    pub end: f64,
    pub text: String,
    pub words: Option<Vec<TimedWord>>,
}

impl Turn {
    /// A turn without per-word times.
    pub fn new(speaker: Speaker, start: f64, end: f64, text: impl Into<String>) -> Self {
        Turn {
            speaker,
            start,
            end,
            text: text.into(),
            words: None,
        }
    }
}

/// Where a phrase matched in a turn: the earliest start and the latest end of the words that satisfied it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhraseMatch {
    pub start: f64,
    pub end: f64,
}
