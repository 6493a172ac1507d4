//! The records of the analytics API: the configuration of companies, organizations and folders, and the
//! transcript JSON of a call.

pub mod config;
pub mod transcript;

pub use config::*;
pub use transcript::*;
