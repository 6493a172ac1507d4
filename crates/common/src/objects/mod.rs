//! The object store port: long-term storage of transcripts and audio under keys such as
//! `acme/support/inbox/<call-id>/transcript.json`. Adapters: a directory on local disk (the embedded
//! default, `LocalDirectory`) and S3 (`S3Store`); both pass `tests/object_store_contract.rs`.
//!
//! Keys are checked before any adapter sees them (`check_key`): segments of letters, digits, `.`, `_`
//! and `-` joined by `/`, none of them empty, `.` or `..`, so no key can reach outside its store. A key
//! is never also the beginning of another key's path (`a/b` and `a/b/c`): the platform's keys are
//! `<company>/<organization>/<folder>/<call>/<file>`, and the local directory could not hold both.

mod local;
mod s3;

use std::ops::Range;
use std::time::SystemTime;

use async_trait::async_trait;

pub use local::LocalDirectory;
pub use s3::{S3Options, S3Store};

/// The longest key, in bytes (S3's limit).
pub const MAX_KEY_LEN: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    #[error("invalid object key {0:?}: segments of A-Z, a-z, 0-9, '.', '_' and '-' joined by '/'")]
    InvalidKey(String),
    #[error("object store: {0}")]
    Io(#[from] std::io::Error),
    /// The S3 service failed or refused the request (the operation and key are in the text).
    #[error("object store: {0}")]
    Service(String),
    /// The S3 service refused the configured key (403): a wrong setting, which waiting does not mend.
    #[error("object store: {0}")]
    Refused(String),
}

/// Refuses keys that are empty, too long, or could name something outside the store.
pub fn check_key(key: &str) -> Result<(), ObjectError> {
    let valid = !key.is_empty()
        && key.len() <= MAX_KEY_LEN
        && key.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        });
    if valid {
        Ok(())
    } else {
        Err(ObjectError::InvalidKey(key.to_string()))
    }
}

/// A prefix is a key, or empty for everything.
fn check_prefix(prefix: &str) -> Result<(), ObjectError> {
    if prefix.is_empty() {
        Ok(())
    } else {
        check_key(prefix.trim_end_matches('/'))
    }
}

/// What a stored object was when it was read (`ObjectStore::get_versioned`), for a write that must not
/// replace anything newer (`ObjectStore::put_if`): its ETag on S3, a digest of its bytes in the local
/// directory. Only the store that gave it can tell what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version(String);

#[async_trait]
pub trait ObjectStore: Send + Sync {
    /// Stores `bytes` under `key`, replacing what was there; readers see the old object or the new one,
    /// never a part.
    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError>;

    /// Stores as `put` does, except that the object is only sure to outlive a crash of the machine once
    /// `sync` has returned after it: many writes then share one flush to disk. An adapter whose `put`
    /// is durable when it returns (S3) keeps this default.
    async fn put_unsynced(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        self.put(key, bytes).await
    }

    /// Makes every object that `put_unsynced` returned from before this call durable.
    async fn sync(&self) -> Result<(), ObjectError> {
        Ok(())
    }

    /// The object under `key`, or `None`.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError>;

    /// The size in bytes of the object under `key`, or `None`.
    async fn size(&self, key: &str) -> Result<Option<u64>, ObjectError>;

    /// The bytes `range` of the object under `key` (fewer where the range runs past its end, none where
    /// it starts there), or `None` when there is no object: a reader of a large object takes it a part
    /// at a time, never whole.
    async fn get_range(&self, key: &str, range: Range<u64>)
        -> Result<Option<Vec<u8>>, ObjectError>;

    /// The object under `key` and its version, or `None`.
    async fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>, ObjectError>;

    /// Stores `bytes` under `key` only if the object there is still the one `version` was read from (a
    /// compare-and-swap: S3's `If-Match`); false, changing nothing, when it was replaced or removed
    /// since. A writer that read, worked and then wrote this way never puts its work over a newer
    /// object, however long it was held up in between.
    async fn put_if(
        &self,
        key: &str,
        bytes: Vec<u8>,
        version: &Version,
    ) -> Result<bool, ObjectError>;

    /// Removes the object under `key`; removing what is not there is not an error (a deletion job that
    /// is run again finishes).
    async fn delete(&self, key: &str) -> Result<(), ObjectError>;

    /// The objects whose keys start with `prefix` (`""` for all), in byte order of their keys, after
    /// `after`, at most `limit`, each with when it was written.
    async fn list_written(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Listed>, ObjectError>;

    /// The keys of what `list_written` gives.
    async fn list(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, ObjectError> {
        let listed = self.list_written(prefix, after, limit).await?;
        Ok(listed.into_iter().map(|l| l.key).collect())
    }
}

/// An object as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    /// When the object was last written, as the store's clock had it.
    pub written: SystemTime,
}
