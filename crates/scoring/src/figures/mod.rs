//! The figures of calls and of the statistics, defined once (docs/figures.md) and computed here without
//! any input or output: what a call's transcript yields (`facts`, with `sentiment` for emotions), how
//! `/stats` and `/appstats` write numbers (`format`), and which calls a `daterange` selects
//! (`daterange`).

pub mod daterange;
pub mod facts;
pub mod format;
pub mod sentiment;

pub use daterange::DateRange;
pub use facts::facts;
