//! The generation of each company's callback secret (docs/transcription.md, Signatures): a number and the
//! time of the last rotation, never the secret, which `callbacks::secrets` derives from them.

use common::db::{Handle, StoreError};
use common::dispatch;

use super::rows::SecretGeneration;
use super::sql::Statements;

/// The company's generation; None when its secret was never rotated.
pub async fn secret_generation<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Option<SecretGeneration>, StoreError> {
    dispatch!(h, Statements::secret_generation(company))
}

/// Moves the company to its next generation, rotated at `rotated`, in one statement: concurrent
/// rotations each get a generation of their own.
pub async fn rotate_secret<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    rotated: &str,
) -> Result<SecretGeneration, StoreError> {
    dispatch!(h, Statements::rotate_secret(company, rotated, true))
}
