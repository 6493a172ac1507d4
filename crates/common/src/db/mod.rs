//! The relational-store port. `DATABASE_URL` picks the adapter: `postgres://` for PostgreSQL (production),
//! `sqlite://` for SQLite files under the data directory (embedded default). Stores that sit on it write
//! their statements once, generic over the `Dialect` they run on; placeholders are `$1`, `$2`, ... which
//! both PostgreSQL and SQLite understand.

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, SqlitePool};

mod dialect;
mod handle;
mod sqlite_reads;
mod statement_pool;
pub use dialect::{Binds, Dialect, Reads};
pub use handle::{Conn, Exec, Handle, Settled, Tx};
pub use sqlite_reads::SqliteReaders;
pub use statement_pool::{Leased, StatementPool};

/// Errors a store reports; handlers map them to API errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint was violated; the text names what already exists.
    #[error("already exists: {0}")]
    Conflict(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// An optimistic-concurrency check failed: the row changed since it was read.
    #[error("stale version")]
    Stale,
    /// A row still refers to what was to be removed (a foreign key); the text names what holds it.
    #[error("in use: {0}")]
    InUse(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

impl StoreError {
    /// Maps a unique violation to `Conflict(what)`, anything else to `Database`.
    pub fn unique(e: sqlx::Error, what: impl Into<String>) -> StoreError {
        match &e {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(what.into())
            }
            _ => StoreError::Database(e),
        }
    }

    /// Maps a foreign-key violation to `InUse(what)`, anything else to `Database`.
    pub fn referenced(e: sqlx::Error, what: impl Into<String>) -> StoreError {
        match &e {
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::InUse(what.into())
            }
            _ => StoreError::Database(e),
        }
    }
}

/// A yes-or-no question about one owner's table that another owner asks inside its own statement, so a
/// request that needs both answers makes one round trip instead of two. The owner of the table writes the
/// expression (it stays the only code that names its table); the asking owner places it among its
/// columns and binds `arguments` from the placeholder it chooses on.
#[derive(Debug, Clone)]
pub struct Probe<'a> {
    /// A boolean SQL expression valid in both dialects, with its arguments written `{0}`, `{1}`, ...; one
    /// may appear more than once, but each first appears after the first appearance of the one before it
    /// (SQLite numbers named parameters in the order it meets them).
    pub expression: &'static str,
    pub arguments: Vec<ProbeArgument<'a>>,
}

/// A value a probe's expression is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeArgument<'a> {
    Text(&'a str),
    Integer(i64),
}

impl Probe<'_> {
    /// The expression with argument `i` at placeholder `$<first + i>` (e.g. `first` 3: `$3`, `$4`, ...).
    pub fn sql(&self, first: usize) -> String {
        (0..self.arguments.len()).fold(self.expression.to_string(), |sql, i| {
            sql.replace(&format!("{{{i}}}"), &format!("${}", first + i))
        })
    }
}

/// A connection pool to one of the supported databases. On PostgreSQL half the connections serve the
/// statements stores run outside a transaction (`StatementPool`); a SQLite file also gets a few that
/// answer hot reads on the calling thread (`SqliteReaders`; none for an in-memory database).
#[derive(Clone, Debug)]
pub enum Database {
    Postgres(PgPool, StatementPool),
    Sqlite(SqlitePool, Option<SqliteReaders>, WriteGate),
}

/// The turns of this process's SQLite write transactions. SQLite has one writer at a time, and a
/// transaction that finds the write lock taken sleeps in SQLite's busy handler for growing naps (up to
/// 100 ms) before it looks again, so under a burst of writes the lock sat idle while writers slept and
/// some waited close to a second. Queued here instead, in arrival order, each begins as the one before
/// it ends. Writers of other processes on the same file still meet the busy handler.
#[derive(Clone, Debug, Default)]
pub struct WriteGate(std::sync::Arc<tokio::sync::Mutex<()>>);

impl WriteGate {
    /// How long a writer waits for its turn, as long as SQLite's own busy timeout: a transaction that
    /// waited for another of its own task would otherwise wait forever.
    const PATIENCE: Duration = Duration::from_secs(10);

    /// Waits for this process's turn to write.
    pub async fn turn(&self) -> Result<tokio::sync::OwnedMutexGuard<()>, sqlx::Error> {
        tokio::time::timeout(Self::PATIENCE, self.0.clone().lock_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)
    }
}

/// Migrations of one owner (a crate), for both dialects. Owners number their versions in disjoint ranges
/// so several can share one database; each applies its own and ignores the others'.
pub struct Migrations {
    pub postgres: fn() -> Migrator,
    pub sqlite: fn() -> Migrator,
}

impl Database {
    /// Connects to `url`; SQLite files are created when missing and run in WAL mode.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Database, sqlx::Error> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url)?;
            // Half the connections for single statements, half for transactions.
            let statements = (max_connections / 2).max(1);
            let pool = PgPoolOptions::new()
                .max_connections(max_connections.saturating_sub(statements).max(1))
                .acquire_timeout(Duration::from_secs(10))
                .test_before_acquire(false)
                .after_connect(|conn, _| Box::pin(watch_for_hang_up(conn)))
                .after_release(|conn, _| Box::pin(settle_or_close(conn)))
                .before_acquire(|conn, meta| Box::pin(ping_if_idle(conn, meta)))
                .connect_with(options.clone())
                .await?;
            let statements =
                StatementPool::new(options, statements as usize, Duration::from_secs(10));
            Ok(Database::Postgres(pool, statements))
        } else if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true);
            let file = options.get_filename().to_path_buf();
            let pool = SqlitePoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .test_before_acquire(false)
                .before_acquire(|conn, meta| Box::pin(ping_if_idle(conn, meta)))
                .connect_with(options)
                .await?;
            let in_memory =
                file.as_os_str().is_empty() || file.to_string_lossy().contains(":memory:");
            let readers = if in_memory {
                None
            } else {
                let count = std::thread::available_parallelism()
                    .map_or(2, |n| n.get() * 2)
                    .min(max_connections as usize);
                Some(
                    SqliteReaders::open(&file, count)
                        .map_err(|e| sqlx::Error::Configuration(e.into()))?,
                )
            };
            Ok(Database::Sqlite(pool, readers, WriteGate::default()))
        } else {
            Err(sqlx::Error::Configuration(
                format!(
                    "DATABASE_URL must start with postgres:// or sqlite:, got {:?}",
                    redact(url)
                )
                .into(),
            ))
        }
    }

    /// This process's turn to write outside a transaction. On SQLite a statement that writes on the
    /// pool (a bus lease or acknowledgement, say) waits at the gate like a transaction, instead of
    /// meeting the transactions in SQLite's busy handler, whose naps would stall them too; on
    /// PostgreSQL there is nothing to wait for. Hold it until the statement has run; never while
    /// holding a transaction of the same database.
    pub async fn write_turn(&self) -> Result<Option<tokio::sync::OwnedMutexGuard<()>>, StoreError> {
        match self {
            Database::Sqlite(_, _, gate) => Ok(Some(gate.turn().await?)),
            Database::Postgres(..) => Ok(None),
        }
    }

    /// Applies the pending migrations of `owner`. Migrations of other owners in the same database are left
    /// alone.
    pub async fn migrate(&self, owner: &Migrations) -> Result<(), sqlx::migrate::MigrateError> {
        match self {
            Database::Postgres(pool, _) => {
                let mut m = (owner.postgres)();
                m.set_ignore_missing(true);
                m.run(pool).await
            }
            Database::Sqlite(pool, ..) => {
                let mut m = (owner.sqlite)();
                m.set_ignore_missing(true);
                m.run(pool).await
            }
        }
    }

    /// Whether the database answers; used by `/readyz`.
    pub async fn ping(&self) -> bool {
        match self {
            Database::Postgres(pool, _) => sqlx::query("SELECT 1").execute(pool).await.is_ok(),
            Database::Sqlite(pool, ..) => sqlx::query("SELECT 1").execute(pool).await.is_ok(),
        }
    }

    pub fn backend_name(&self) -> &'static str {
        match self {
            Database::Postgres(..) => "postgres",
            Database::Sqlite(..) => "sqlite",
        }
    }

    pub async fn close(&self) {
        match self {
            Database::Postgres(pool, statements) => {
                statements.close().await;
                pool.close().await
            }
            Database::Sqlite(pool, ..) => pool.close().await,
        }
    }
}

/// How long a pooled connection may sit idle before it is pinged on its way out of the pool. A busy pool
/// hands its connections out again within milliseconds; pinging each of them (the pool's default) would
/// cost a round trip per statement, while a connection idle this long may have been dropped by the server
/// or a proxy and is checked first.
pub const PING_AFTER_IDLE: Duration = Duration::from_secs(2);

/// How often a PostgreSQL backend running a statement checks that its client is still there.
const CLIENT_CHECK_MS: u32 = 1000;

/// Has the server end a statement whose client has gone. A request cut off midway (its time limit, a
/// client that hung up) drops its connection, which closes the socket; without this, PostgreSQL only
/// notices when it sends the answer, so a long statement would run on to its end, holding its locks
/// and a backend, for nobody. `client_connection_check_interval` exists from PostgreSQL 14; older
/// servers are left as they are.
pub(crate) async fn watch_for_hang_up(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query(
        "SELECT set_config('client_connection_check_interval', $1, false) \
         WHERE current_setting('server_version_num')::int >= 140000",
    )
    .bind(CLIENT_CHECK_MS.to_string())
    .execute(conn)
    .await?;
    Ok(())
}

/// How long a connection given back with its transaction left unfinished may take to settle before it
/// is closed instead.
const SETTLE: Duration = Duration::from_millis(250);

/// Whether a connection given back to the transactions' pool is kept. sqlx waits for every answer due
/// on a connection it takes back; on one whose transaction was dropped midway (a request cut off while
/// a statement ran) that is the end of the statement, however long it runs. A transaction dropped before
/// its end leaves its rollback queued (`should_flush`): the connection is kept if that settles at once
/// (the transaction was dropped after an error, between statements), and closed otherwise, which the
/// server notices within `CLIENT_CHECK_MS` and ends the statement (`watch_for_hang_up`).
async fn settle_or_close(conn: &mut sqlx::PgConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection;
    if !conn.should_flush() {
        return Ok(true);
    }
    match tokio::time::timeout(SETTLE, conn.ping()).await {
        Ok(settled) => settled.map(|()| true),
        Err(_) => Ok(false),
    }
}

async fn ping_if_idle<C: sqlx::Connection>(
    conn: &mut C,
    meta: sqlx::pool::PoolConnectionMetadata,
) -> Result<bool, sqlx::Error> {
    if meta.idle_for >= PING_AFTER_IDLE {
        conn.ping().await?;
    }
    Ok(true)
}

/// Hides the password of a database URL, for messages and logs.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// Milliseconds since the Unix epoch: the portable type for instants the database compares.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The current time at the precision both databases store (microseconds), so a record reads back equal.
pub fn now() -> chrono::DateTime<chrono::Utc> {
    use chrono::SubsecRound;
    chrono::Utc::now().trunc_subsecs(6)
}
