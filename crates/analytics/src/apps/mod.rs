//! Applications (docs/scoring.md): the checked definition of `PUT /apps`, the compiled form that scores a
//! call's turns, the scorecard of `/appmatches`, the cache that compiles each revision once, and the
//! budget of the scanner states they keep. All pure: the routes and workers do the reading and writing.

pub mod cache;
pub mod compiled;
pub mod definition;
pub mod kept;
pub mod limits;
pub mod pool;
pub mod scorecard;

pub use cache::AppCache;
pub use compiled::{CompiledApp, Evaluation};
pub use definition::{Definition, DefinitionError};
pub use kept::ScanBudget;
pub use scorecard::{scorecard, Selection};
