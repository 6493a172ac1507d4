//! The embedded object store: one file per object under a root directory. A write goes to a temporary
//! file in the same file system, is flushed (`put`; `put_unsynced` leaves that to the next `sync`, one
//! flush of the file system for a batch of writes), then renamed over the key, so a reader never sees
//! half an object. File work runs on the blocking pool.
//!
//! An object's version is the SHA-256 of its bytes. A conditional write (`put_if`) compares it and
//! renames its file over the key in one step that no other write or removal of that key comes between,
//! in this process or another sharing the directory (replicas on one volume): the last step of every
//! write and removal holds an exclusive `flock` on a lock file of the key's stripe (one of 64, under
//! the temporary directory) for that step only.
//!
//! Directories are made for a key as it is written, and a removal takes away the directories it leaves
//! empty, so the folders of deleted calls do not pile up. A write whose directory a removal of the last
//! object in it took away meanwhile makes it again.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use super::{check_key, check_prefix, Listed, ObjectError, ObjectStore, Version};

/// How many lock files the keys are spread over.
const STRIPES: u64 = 64;

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

    /// The lock file of the stripe of `key` (see the module).
    fn lock_file(&self, key: &str) -> PathBuf {
        // FNV-1a: the same stripe for a key in every process.
        let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        self.root
            .join(TEMP_DIR)
            .join(format!("lock-{:02}", hash % STRIPES))
    }

    /// Writes `bytes` to a temporary file, flushed to disk when `synced`, and renames it over `key`
    /// when `expected` is None or the version of the object there; whether it did.
    async fn write(
        &self,
        key: &str,
        bytes: Vec<u8>,
        synced: bool,
        expected: Option<Version>,
    ) -> Result<bool, ObjectError> {
        check_key(key)?;
        let target = self.path(key);
        let temp = self
            .root
            .join(TEMP_DIR)
            .join(uuid::Uuid::new_v4().simple().to_string());
        let lock = self.lock_file(key);
        blocking(move || {
            use std::io::Write;
            let mut file = std::fs::File::create(&temp)?;
            file.write_all(&bytes)?;
            if synced {
                file.sync_all()?;
            }
            let _turn = hold(&lock)?;
            if let Some(expected) = expected {
                let current = read(&target, None)?.map(|bytes| version_of(&bytes));
                if current != Some(expected) {
                    let _ = std::fs::remove_file(&temp);
                    return Ok(false);
                }
            }
            rename_into(&temp, &target).inspect_err(|_| {
                let _ = std::fs::remove_file(&temp);
            })?;
            Ok(true)
        })
        .await
    }
}

/// How many times a write makes its directory again when a removal takes it away before the write's
/// rename (each time, the last object of the directory was removed in between).
const RENAME_TRIES: usize = 16;

/// Renames `temp` over `target`, making the directories of `target` first, and again when a removal took
/// them away before the rename.
fn rename_into(temp: &Path, target: &Path) -> std::io::Result<()> {
    let mut tries = 0;
    loop {
        // A directory removed between the steps of making the path shows as one found and then
        // missing: AlreadyExists from `create_dir_all`, NotFound from the rename.
        let made = match target.parent() {
            Some(parent) => std::fs::create_dir_all(parent),
            None => Ok(()),
        };
        let done = made.and_then(|()| std::fs::rename(temp, target));
        match done {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::AlreadyExists
                ) && tries < RENAME_TRIES =>
            {
                tries += 1;
            }
            done => return done,
        }
    }
}

/// Removes the directories of `path` under `root` that are empty, from the deepest up; the first that is
/// not (or is gone already, or is the root) ends it.
fn remove_empty_parents(root: &Path, path: &Path) {
    for dir in path.ancestors().skip(1) {
        if dir == root || !dir.starts_with(root) || std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// Holds the lock file at `path` (made when missing) until the file returned is dropped.
fn hold(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(file)
}

/// The version of an object of these bytes: their SHA-256, in hex.
fn version_of(bytes: &[u8]) -> Version {
    Version(format!("{:x}", Sha256::digest(bytes)))
}

/// The object at `path` opened for reading, or None (nothing there, or a directory of other keys).
fn open(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) if path.is_dir() => return Ok(None),
        Err(e) => return Err(e),
    };
    // A key that names a directory of other keys is no object.
    if file.metadata()?.is_dir() {
        return Ok(None);
    }
    Ok(Some(file))
}

/// The bytes `range` of the object at `path` (all of them without one), or None.
fn read(path: &Path, range: Option<Range<u64>>) -> std::io::Result<Option<Vec<u8>>> {
    let Some(mut file) = open(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    match range {
        Some(range) => {
            file.seek(SeekFrom::Start(range.start))?;
            file.take(range.end.saturating_sub(range.start))
                .read_to_end(&mut bytes)?;
        }
        None => {
            file.read_to_end(&mut bytes)?;
        }
    }
    Ok(Some(bytes))
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
fn walk(root: &Path, dir: &Path, out: &mut Vec<Listed>) -> std::io::Result<()> {
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
            // A file removed since the directory was read is simply not listed.
            let Ok(written) = entry.metadata().and_then(|m| m.modified()) else {
                continue;
            };
            out.push(Listed {
                key: relative.to_string_lossy().replace('\\', "/"),
                written,
            });
        }
    }
    Ok(())
}

#[async_trait]
impl ObjectStore for LocalDirectory {
    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        self.write(key, bytes, true, None).await.map(|_| ())
    }

    async fn put_unsynced(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        self.write(key, bytes, false, None).await.map(|_| ())
    }

    async fn put_if(
        &self,
        key: &str,
        bytes: Vec<u8>,
        version: &Version,
    ) -> Result<bool, ObjectError> {
        self.write(key, bytes, true, Some(version.clone())).await
    }

    async fn sync(&self) -> Result<(), ObjectError> {
        let root = self.root.clone();
        blocking(move || sync_file_system(&root)).await
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        blocking(move || read(&path, None)).await
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        blocking(move || match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => Ok(Some(meta.len())),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        })
        .await
    }

    async fn get_range(
        &self,
        key: &str,
        range: Range<u64>,
    ) -> Result<Option<Vec<u8>>, ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        blocking(move || read(&path, Some(range))).await
    }

    async fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>, ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        blocking(move || {
            Ok(read(&path, None)?.map(|bytes| {
                let version = version_of(&bytes);
                (bytes, version)
            }))
        })
        .await
    }

    async fn delete(&self, key: &str) -> Result<(), ObjectError> {
        check_key(key)?;
        let path = self.path(key);
        let lock = self.lock_file(key);
        let root = self.root.clone();
        blocking(move || {
            let _turn = hold(&lock)?;
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    remove_empty_parents(&root, &path);
                    Ok(())
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(_) if path.is_dir() => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
    }

    async fn list_written(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Listed>, ObjectError> {
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
            let mut listed = Vec::new();
            walk(&root, &start, &mut listed)?;
            listed.retain(|l| {
                l.key.starts_with(&prefix) && after.as_ref().is_none_or(|a| &l.key > a)
            });
            listed.sort_by(|a, b| a.key.cmp(&b.key));
            listed.truncate(limit);
            Ok(listed)
        })
        .await
    }
}
