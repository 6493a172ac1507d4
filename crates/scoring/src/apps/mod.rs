//! Applications (docs/scoring.md): the checked definition of `PUT /apps`, the compiled form that scores a
//! call's turns, the scorecard of `/appmatches`, and the budget of the scanner states they keep.

pub mod compiled;
pub mod definition;
pub mod kept;
pub mod limits;
pub mod scorecard;

pub use compiled::{CompiledApp, Evaluation};
pub use definition::{Definition, DefinitionError};
pub use kept::ScanBudget;
pub use scorecard::{scorecard, Selection};
