//! What scoring a call produces (docs/scoring.md): its figures (docs/figures.md), counted once in the
//! daily rollups of its folder and agent, and its score in every category of every application of its
//! folder.

/// How a speaker's sentiment went over a call (docs/figures.md, Emotion).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Emotion {
    Positive,
    Negative,
    Improving,
    Worsening,
}

impl Emotion {
    pub const ALL: [Emotion; 4] = [
        Emotion::Positive,
        Emotion::Negative,
        Emotion::Improving,
        Emotion::Worsening,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Emotion::Positive => "positive",
            Emotion::Negative => "negative",
            Emotion::Improving => "improving",
            Emotion::Worsening => "worsening",
        }
    }

    pub fn parse(text: &str) -> Option<Emotion> {
        Emotion::ALL.into_iter().find(|e| e.as_str() == text)
    }
}

/// The figures of one call, all in seconds except `words`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFacts {
    /// The call's local date, YYYY-MM-DD (the date part of its `datetime`).
    pub day: String,
    /// The call's local time, YYYY-MM-DDTHH:MM:SS.
    pub datetime: String,
    pub agent_id: String,
    pub duration: f64,
    pub silence: f64,
    pub words: i64,
    pub agent_talk: f64,
    pub client_talk: f64,
    /// None: neutral, or the speaker said nothing.
    pub agent_emotion: Option<Emotion>,
    pub client_emotion: Option<Emotion>,
}

/// A call's score in one category of an application.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryScore {
    /// The category's path, levels joined by '.'; '' for the application as a whole.
    pub category: String,
    pub score: u32,
    /// At least one leaf at or below the category matched (scored above 0).
    pub hit: bool,
    /// The mean over the category's children of their hit; a leaf's coverage is its hit.
    pub coverage: f64,
}

/// A call's scores by one application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppScores {
    pub app: String,
    /// The revision of the application the scores came from.
    pub revision: String,
    /// Every category at every level, and '' for the application.
    pub categories: Vec<CategoryScore>,
}
