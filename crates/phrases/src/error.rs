//! The language's errors: a phrase that does not parse, whose message quotes the phrase and gives the
//! 0-based character position where the problem is, so an editor can point at it; and phrases too many or
//! too long for one matcher.

use std::fmt;

/// Why a phrase's text is not a valid phrase, and where.
///
/// Displayed as `invalid phrase "refund & ": nothing after '&' at position 9`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhraseError {
    phrase: String,
    position: usize,
    reason: String,
}

impl PhraseError {
    pub(crate) fn new(phrase: &str, position: usize, reason: impl Into<String>) -> Self {
        PhraseError {
            phrase: phrase.to_string(),
            position,
            reason: reason.into(),
        }
    }

    /// The phrase's text as given.
    pub fn phrase(&self) -> &str {
        &self.phrase
    }

    /// The 0-based position, in characters (not bytes), of the problem; the phrase's length when the
    /// problem is that something is missing at its end.
    pub fn position(&self) -> usize {
        self.position
    }

    /// What is wrong, without the phrase and the position.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for PhraseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid phrase {:?}: {} at position {}",
            self.phrase, self.reason, self.position
        )
    }
}

impl std::error::Error for PhraseError {}

/// Phrases that one matcher cannot hold: the numbers of its program would overflow the bits they are
/// given (more than 2^29 phrases, programs of 2^30 numbers in all, or a sequence of 2^24 patterns). Far
/// beyond any application the analytics API accepts, but a limit of this crate's callers all the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    limit: &'static str,
}

impl TooLarge {
    pub(crate) fn new(limit: &'static str) -> Self {
        TooLarge { limit }
    }
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "too many phrases for one matcher: {}", self.limit)
    }
}

impl std::error::Error for TooLarge {}
