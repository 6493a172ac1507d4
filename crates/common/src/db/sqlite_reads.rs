//! Reads on SQLite without leaving the calling thread. sqlx runs every SQLite statement on its
//! connection's own worker thread, two thread hand-offs per statement, and on a request that misses the
//! administration API's read cache those hand-offs (futex waits and wake-ups) took more CPU than
//! everything else together, SQLite's own work included. A few reads on the services' hot paths are
//! answered here instead, on a small set of query-only connections, right on the calling thread: a read
//! from SQLite's page cache takes microseconds, about what an in-memory cache lookup costs.
//!
//! The set is an accelerator, never the only way: a read that finds every connection busy, or fails for
//! any reason (a lock, a schema change under way), answers `None` and the caller runs the same statement
//! through the pool, which waits and reports errors as usual.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rusqlite::{Connection, OpenFlags};

/// Query-only connections to one SQLite file, shared by every worker of a process.
#[derive(Clone)]
pub struct SqliteReaders(Arc<Readers>);

struct Readers {
    connections: Vec<Mutex<Connection>>,
    next: AtomicUsize,
}

impl std::fmt::Debug for SqliteReaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteReaders")
            .field("connections", &self.0.connections.len())
            .finish()
    }
}

impl SqliteReaders {
    /// Opens `count` query-only connections to the database file at `path` (which exists: the pool
    /// created it). They never wait for a lock: a busy database makes a read fall back to the pool.
    pub fn open(path: &Path, count: usize) -> rusqlite::Result<SqliteReaders> {
        let connections = (0..count.max(1))
            .map(|_| {
                let c = Connection::open_with_flags(
                    path,
                    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                c.pragma_update(None, "query_only", true)?;
                c.busy_timeout(std::time::Duration::ZERO)?;
                Ok(Mutex::new(c))
            })
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(SqliteReaders(Arc::new(Readers {
            connections,
            next: AtomicUsize::new(0),
        })))
    }

    /// Runs `read` on a free connection: `None` when all are busy or the read failed (the caller then
    /// reads through the pool).
    pub fn read<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Option<T> {
        let connections = &self.0.connections;
        let start = self.0.next.fetch_add(1, Ordering::Relaxed);
        let free = (0..connections.len())
            .find_map(|i| connections[(start + i) % connections.len()].try_lock())?;
        match read(&free) {
            Ok(value) => Some(value),
            Err(error) => {
                tracing::debug!(%error, "a direct SQLite read failed; reading through the pool");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readers(count: usize) -> (tempfile_path::TempPath, SqliteReaders) {
        let path = tempfile_path::TempPath::new();
        let c = Connection::open(path.as_ref()).unwrap();
        c.execute_batch("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (7);")
            .unwrap();
        let r = SqliteReaders::open(path.as_ref(), count).unwrap();
        (path, r)
    }

    /// A throwaway database file, removed when dropped.
    mod tempfile_path {
        pub struct TempPath(std::path::PathBuf);
        impl TempPath {
            pub fn new() -> TempPath {
                TempPath(std::env::temp_dir().join(format!(
                    "speech-readers-{}.db",
                    uuid::Uuid::new_v4().simple()
                )))
            }
        }
        impl AsRef<std::path::Path> for TempPath {
            fn as_ref(&self) -> &std::path::Path {
                &self.0
            }
        }
        impl Drop for TempPath {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

    #[test]
    fn reads_answer_and_never_write() {
        let (_path, r) = readers(2);
        let v: Option<i64> = r.read(|c| c.query_row("SELECT v FROM t", [], |row| row.get(0)));
        assert_eq!(v, Some(7));
        let wrote = r.read(|c| c.execute("INSERT INTO t VALUES (8)", []));
        assert_eq!(wrote, None, "the connections are query-only");
    }

    #[test]
    fn with_every_connection_busy_a_read_falls_back() {
        let (_path, r) = readers(2);
        let held: Vec<_> = r.0.connections.iter().map(|c| c.lock()).collect();
        assert_eq!(r.read(|_| Ok(1)), None);
        drop(held);
        assert_eq!(r.read(|_| Ok(1)), Some(1));
    }
}
