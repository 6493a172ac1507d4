//! The service's side of applications: storing and removing them with their rescore jobs (`changes`),
//! the cache that compiles each stored revision once (`cache`) and the threads that run the matches off
//! the request threads, a fair share per company (`pool`). The definitions, their compiled form and
//! scorecards are the `scoring` crate's.

pub mod cache;
pub mod changes;
pub mod pool;

pub use cache::AppCache;
