//! Transactions, and the handle that lets one store function run either on the pool or inside a
//! transaction. A change, its audit entry and (later) the bus message announcing it are written by
//! several stores; the caller opens one `Tx`, passes `&mut tx` to each store function, and commits once,
//! so they land together or not at all. Reads that need no transaction pass `&db`.
//!
//! Store functions are written once per dialect module (see `dispatch!`): each takes the dialect's
//! connection, `&mut PgConnection` or `&mut SqliteConnection`, and runs all its statements on it.

use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, Postgres, Sqlite, SqliteConnection, Transaction};
use tokio::sync::OwnedMutexGuard;

use super::{Database, Leased, StoreError};

/// An open transaction on either database. Dropped without `commit`, it rolls back.
pub enum Tx {
    Postgres(Transaction<'static, Postgres>),
    /// The transaction and, until it ends, this process's turn to write (`WriteGate`).
    Sqlite(Transaction<'static, Sqlite>, OwnedMutexGuard<()>),
}

impl Database {
    /// Opens a transaction. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`), so a
    /// transaction that reads and then writes never fails half way on a lock upgrade.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        match self {
            Database::Postgres(pool, _) => Ok(Tx::Postgres(pool.begin().await?)),
            Database::Sqlite(pool, _, gate) => {
                let turn = gate.turn().await?;
                Ok(Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?, turn))
            }
        }
    }
}

impl Tx {
    pub async fn commit(self) -> Result<(), StoreError> {
        match self {
            Tx::Postgres(tx) => tx.commit().await?,
            Tx::Sqlite(tx, _turn) => tx.commit().await?,
        }
        Ok(())
    }

    pub async fn rollback(self) -> Result<(), StoreError> {
        match self {
            Tx::Postgres(tx) => tx.rollback().await?,
            Tx::Sqlite(tx, _turn) => tx.rollback().await?,
        }
        Ok(())
    }
}

/// Where a store function runs: on the pool, or inside an open transaction.
pub enum Handle<'a> {
    Pool(&'a Database),
    Tx(&'a mut Tx),
}

impl<'a> From<&'a Database> for Handle<'a> {
    fn from(db: &'a Database) -> Self {
        Handle::Pool(db)
    }
}

impl<'a> From<&'a mut Tx> for Handle<'a> {
    fn from(tx: &'a mut Tx) -> Self {
        Handle::Tx(tx)
    }
}

/// A connection held by one store function for all its statements: taken from the pool, or the
/// transaction's own.
pub enum Conn<'a> {
    PostgresStatement(Leased),
    PostgresTx(&'a mut PgConnection),
    SqlitePooled(PoolConnection<Sqlite>),
    SqliteTx(&'a mut SqliteConnection),
}

/// The dialect-typed connection a store function's statements run on.
pub enum Exec<'c> {
    Postgres(&'c mut PgConnection),
    Sqlite(&'c mut SqliteConnection),
}

impl<'a> Handle<'a> {
    /// Runs a read on the calling thread when this is a SQLite pool with direct readers and one is free
    /// (`SqliteReaders`); `None` tells the store function to run its statement through the pool.
    pub fn read_now<T>(
        &self,
        read: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> Option<T> {
        match self {
            Handle::Pool(Database::Sqlite(_, Some(readers), _)) => readers.read(read),
            _ => None,
        }
    }

    /// The connection to run on: acquired from the pool, or borrowed from the transaction.
    pub async fn conn(self) -> Result<Conn<'a>, StoreError> {
        Ok(match self {
            Handle::Pool(Database::Postgres(_, statements)) => {
                Conn::PostgresStatement(statements.acquire().await?)
            }
            Handle::Pool(Database::Sqlite(pool, ..)) => Conn::SqlitePooled(pool.acquire().await?),
            Handle::Tx(Tx::Postgres(tx)) => Conn::PostgresTx(&mut *tx),
            Handle::Tx(Tx::Sqlite(tx, _)) => Conn::SqliteTx(&mut *tx),
        })
    }
}

impl Conn<'_> {
    pub fn exec(&mut self) -> Exec<'_> {
        match self {
            Conn::PostgresStatement(c) => Exec::Postgres(c.connection()),
            Conn::PostgresTx(c) => Exec::Postgres(c),
            Conn::SqlitePooled(c) => Exec::Sqlite(&mut *c),
            Conn::SqliteTx(c) => Exec::Sqlite(c),
        }
    }

    /// Tells the connection how its statements ended: a connection of the statement pool is reused only
    /// after an answer that leaves it sound, and closed after a failure of the connection itself or when
    /// cut off (dropped before this call; `StatementPool`).
    pub fn finish(&mut self, sound: bool) {
        if let Conn::PostgresStatement(c) = self {
            c.finish(sound);
        }
    }
}

/// Whether a store function's result leaves its connection fit for the next statement: an answer, an
/// error of the store's own, or an error the server reported for the statement (it then waits for the
/// next one). A failed transport or an answer that could not be read leaves it in doubt.
pub trait Settled {
    fn connection_sound(&self) -> bool;
}

impl<T> Settled for Result<T, StoreError> {
    fn connection_sound(&self) -> bool {
        match self {
            Err(StoreError::Database(e)) => {
                matches!(e, sqlx::Error::Database(_) | sqlx::Error::RowNotFound)
            }
            _ => true,
        }
    }
}

/// Runs a store's statement on the connection of `handle`, which is anything `Into<Handle>`: `&db` or
/// `&mut tx`. `dispatch!(h, Statements::f(args..))` calls `Statements::<sqlx::Postgres>::f` or
/// `Statements::<sqlx::Sqlite>::f` (see `Dialect`) with the connection first; a store whose statements
/// differ by database names a function for each: `dispatch!(h, events_pg::read | events_sqlite::read(args..))`.
#[macro_export]
macro_rules! dispatch {
    (@run $handle:expr, [$($pg:tt)+], [$($lite:tt)+], ($($arg:expr),*)) => {{
        let handle: $crate::db::Handle<'_> = ::core::convert::Into::into($handle);
        let mut conn = handle.conn().await?;
        let result = match conn.exec() {
            $crate::db::Exec::Postgres(c) => $($pg)+(c, $($arg),*).await,
            $crate::db::Exec::Sqlite(c) => $($lite)+(c, $($arg),*).await,
        };
        conn.finish($crate::db::Settled::connection_sound(&result));
        result
    }};
    ($handle:expr, $statements:ident :: $f:ident ( $($arg:expr),* $(,)? )) => {
        $crate::dispatch!(@run $handle,
            [$statements::<::sqlx::Postgres>::$f], [$statements::<::sqlx::Sqlite>::$f], ($($arg),*))
    };
    ($handle:expr, $pg:ident :: $pg_f:ident | $lite:ident :: $lite_f:ident ( $($arg:expr),* $(,)? )) => {
        $crate::dispatch!(@run $handle, [$pg::$pg_f], [$lite::$lite_f], ($($arg),*))
    };
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Write transactions of one process begin in the order they asked: each waits its turn at the gate
    /// instead of in SQLite's busy handler, whose growing naps let later writers overtake and left some
    /// waiting close to a second under load. Without the gate the writers commit in whatever order
    /// their naps end.
    #[tokio::test]
    async fn sqlite_writers_take_turns_in_the_order_they_came() {
        let file =
            std::env::temp_dir().join(format!("speech-gate-{}.db", uuid::Uuid::new_v4().simple()));
        let db = Database::connect(&format!("sqlite://{}", file.display()), 16)
            .await
            .unwrap();
        sqlx::query("CREATE TABLE turns (seq INTEGER PRIMARY KEY AUTOINCREMENT, writer INTEGER)")
            .execute(match &db {
                Database::Sqlite(pool, ..) => pool,
                Database::Postgres(..) => unreachable!("a SQLite URL"),
            })
            .await
            .unwrap();

        let first = db.begin().await.unwrap();
        let mut writers = Vec::new();
        for writer in 0..10_i64 {
            let db = db.clone();
            writers.push(tokio::spawn(async move {
                let mut tx = db.begin().await.unwrap();
                let Tx::Sqlite(conn, _) = &mut tx else {
                    unreachable!("a SQLite transaction")
                };
                sqlx::query("INSERT INTO turns (writer) VALUES (?)")
                    .bind(writer)
                    .execute(&mut **conn)
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
            }));
            // Each writer is waiting before the next one comes.
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        first.commit().await.unwrap();
        for w in writers {
            w.await.unwrap();
        }
        let Database::Sqlite(pool, ..) = &db else {
            unreachable!("a SQLite URL")
        };
        let order: Vec<i64> = sqlx::query_scalar("SELECT writer FROM turns ORDER BY seq")
            .fetch_all(pool)
            .await
            .unwrap();
        db.close().await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
        }
        assert_eq!(order, (0..10).collect::<Vec<i64>>());
    }
}
