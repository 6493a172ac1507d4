//! The phrase language of applications (docs/phrases.md): an application is a tree of categories whose
//! leaves hold phrases, and every call transcript landing in a folder is scored by them. This crate is the
//! language alone, with no I/O: [`Phrase::parse`] turns a phrase's text into a [`Phrase`], a
//! [`MatcherBuilder`] compiles many phrases into one [`Matcher`] whose [`Matcher::scan`] (or a reusable
//! [`Scanner`]) finds every phrase matching each speaker turn of a call, and [`score_leaf`] scores one leaf
//! from those hits.
//! [`reference::matches`] is the plain, index-free statement of the matching rules that the compiled
//! matcher is tested against.
//!
//! ```
//! use phrases::{score_leaf, MatcherBuilder, Phrase, Speaker, Turn};
//!
//! let mut builder = MatcherBuilder::new();
//! builder.add(1, Phrase::parse("refund & account").unwrap(), None);
//! builder.add(2, Phrase::parse("-thank* you").unwrap(), Some(Speaker::Client));
//! let matcher = builder.build().unwrap();
//!
//! let turns = [
//!     Turn::new(Speaker::Client, 0.0, 4.0, "I want a refund on my account, thank you."),
//!     Turn::new(Speaker::Agent, 4.0, 6.0, "Thanks you too"),
//! ];
//! let hits = matcher.scan(&turns, 6.0);
//! assert_eq!(hits.len(), 2);
//! // Turn 0: one include and one exclude match, so it adds max(1 - 1, 0) = 0.
//! assert_eq!(score_leaf(&hits, &[1], &[2]).score, 0);
//! ```

mod compile;
mod error;
mod found;
mod glob;
mod hash;
mod lexicon;
mod normalize;
mod numbers;
mod parse;
mod phrase;
mod program;
pub mod reference;
mod scan;
mod score;
mod turn;

pub use compile::{Matcher, MatcherBuilder, Observed};
pub use error::{PhraseError, TooLarge};
pub use parse::{MAX_PHRASE_CHARS, MAX_WITHIN};
pub use phrase::Phrase;
pub use scan::{Hit, OverBudget, ScanState, Scanner};
pub use score::{score_leaf, LeafScore, PhraseMatches, TurnMatch};
pub use turn::{PhraseMatch, Speaker, TimedWord, Turn};
