//! The records of the analytics API: the configuration of companies, organizations and folders, and the
//! transcript JSON of a call.

pub mod config;
pub mod scores;
pub mod stored;
pub mod transcript;
pub mod utterances;

pub use config::*;
pub use scores::*;
pub use stored::*;
pub use transcript::*;
