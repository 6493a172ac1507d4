//! The analytics API's domain, with no input or output: the rules of names (`names`), the records of
//! folder settings and transcripts (`model`), applications and how they score a call (`apps`), and the
//! figures of calls and statistics (`figures`). The service reads and writes; everything here is a
//! function of its arguments, so it is tested without a database, a broker or a clock.

pub mod apps;
pub mod figures;
pub mod model;
pub mod names;

/// A record refused because it breaks a rule; the message names the field and the rule (the API answers
/// it as a 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);
