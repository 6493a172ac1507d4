//! The embedded object store: one file per object under a root directory. A write goes to a temporary
//! file in the same file system, is flushed (`put`; `put_unsynced` leaves that to the next `sync`, one
//! flush of the file system for a batch of writes), then renamed over the key, so a reader never sees
//! half an object. File work runs on the blocking pool.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use super::{check_key, check_prefix, ObjectError, ObjectStore};

/// Temporary files live here, beside the objects (a rename within one file system is atomic); the name
/// is not a valid key segment start for listings, which skip it.
const TEMP_DIR: &str = ".incoming";

pub struct LocalDirectory {
    root: PathBuf,
}

impl LocalDirectory {
    /// A store under `root`, created if missing.
    pub fn open(root: impl Into<PathBuf>) -> Result<LocalDirectory, ObjectError> {
        let root = root.into();
        std::fs::create_dir_all(root.join(TEMP_DIR))?;
        Ok(LocalDirectory { root })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// Writes `bytes` to a temporary file, flushed to disk when `synced`, and renames it over `key`.
    async fn write(&self, key: &str, bytes: Vec<u8>, synced: bool) -> Result<(), ObjectError> {
        check_key(key)?;
        let target = self.path(key);
        let temp = self
            .root
            .join(TEMP_DIR)
            .join(uuid::Uuid::new_v4().simple().to_string());
        blocking(move || {
            use std::io::Write;
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let mut file = std::fs::File::create(&temp)?;
            file.write_all(&bytes)?;
            if synced {
                file.sync_all()?;
            }
            std::fs::rename(&temp, &target).inspect_err(|_| {
                let _ = std::fs::remove_file(&temp);
            })
        })
        .await
    }
}

/// Flushes to disk everything written to the file system that holds `root`: one call for any number
/// of files (where each file's own `fsync` is a flush of the file system's journal of its own).
#[cfg(target_os = "linux")]
fn sync_file_system(root: &Path) -> std::io::Result<()> {
    let dir = std::fs::File::open(root)?;
    rustix::fs::syncfs(&dir).map_err(std::io::Error::from)
}

/// Elsewhere, every file system (there is no call for one).
#[cfg(not(target_os = "linux"))]
fn sync_file_system(_root: &Path) -> std::io::Result<()> {
    rustix::fs::sync();
    Ok(())
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, ObjectError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(std::io::Error::other)?
        .map_err(ObjectError::Io)
}

/// Every key under `dir`, relative to `root`, skipping the temporary directory.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        if path.parent() == Some(root) && entry.file_name() == TEMP_DIR {
            continue;
        }
        if entry.file_type()?.is_dir() {
            walk(root, &path, out)?;
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

#[async_trait]
impl ObjectStore for LocalDirectory {
    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        self.write(key, bytes, true).await
    }

    async fn put_unsynced(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        self.write(key, bytes, false).await
    }

    async fn sync(&self) -> Result<(), ObjectError> {
        let root = self.root.clone();
        blocking(move || sync_file_system(&root)).await
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        blocking(move || match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            // A key that names a directory of other keys is no object.
            Err(_) if path.is_dir() => Ok(None),
            Err(e) => Err(e),
        })
        .await
    }

    async fn delete(&self, key: &str) -> Result<(), ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        blocking(move || match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(_) if path.is_dir() => Ok(()),
            Err(e) => Err(e),
        })
        .await
    }

    async fn list(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, ObjectError> {
        check_prefix(prefix)?;
        let root = self.root.clone();
        let prefix = prefix.to_string();
        let after = after.map(str::to_string);
        blocking(move || {
            // Only the directory the prefix points into is walked, not the whole store.
            let start = match prefix.rfind('/') {
                Some(i) => root.join(&prefix[..i]),
                None => root.clone(),
            };
            let mut keys = Vec::new();
            walk(&root, &start, &mut keys)?;
            keys.retain(|k| k.starts_with(&prefix) && after.as_ref().is_none_or(|a| k > a));
            keys.sort();
            keys.truncate(limit);
            Ok(keys)
        })
        .await
    }
}
