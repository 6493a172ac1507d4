//! Transactions, and the handle that lets one store function run either on the pool or inside a
//! transaction. A change, its audit entry and (later) the bus message announcing it are written by
//! several stores; the caller opens one `Tx`, passes `&mut tx` to each store function, and commits once,
//! so they land together or not at all. Reads that need no transaction pass `&db`.
//!
//! Store functions are written once per dialect module (see `dispatch!`): each takes the dialect's
//! connection, `&mut PgConnection` or `&mut SqliteConnection`, and runs all its statements on it.

use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, Postgres, Sqlite, SqliteConnection, Transaction};

use super::{Database, StoreError};

/// An open transaction on either database. Dropped without `commit`, it rolls back.
pub enum Tx {
    Postgres(Transaction<'static, Postgres>),
    Sqlite(Transaction<'static, Sqlite>),
}

impl Database {
    /// Opens a transaction. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`), so a
    /// transaction that reads and then writes never fails half way on a lock upgrade.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        match self {
            Database::Postgres(pool) => Ok(Tx::Postgres(pool.begin().await?)),
            Database::Sqlite(pool, _) => Ok(Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?)),
        }
    }
}

impl Tx {
    pub async fn commit(self) -> Result<(), StoreError> {
        match self {
            Tx::Postgres(tx) => tx.commit().await?,
            Tx::Sqlite(tx) => tx.commit().await?,
        }
        Ok(())
    }

    pub async fn rollback(self) -> Result<(), StoreError> {
        match self {
            Tx::Postgres(tx) => tx.rollback().await?,
            Tx::Sqlite(tx) => tx.rollback().await?,
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
    PostgresPooled(PoolConnection<Postgres>),
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
            Handle::Pool(Database::Sqlite(_, Some(readers))) => readers.read(read),
            _ => None,
        }
    }

    /// The connection to run on: acquired from the pool, or borrowed from the transaction.
    pub async fn conn(self) -> Result<Conn<'a>, StoreError> {
        Ok(match self {
            Handle::Pool(Database::Postgres(pool)) => Conn::PostgresPooled(pool.acquire().await?),
            Handle::Pool(Database::Sqlite(pool, _)) => Conn::SqlitePooled(pool.acquire().await?),
            Handle::Tx(Tx::Postgres(tx)) => Conn::PostgresTx(&mut *tx),
            Handle::Tx(Tx::Sqlite(tx)) => Conn::SqliteTx(&mut *tx),
        })
    }
}

impl Conn<'_> {
    pub fn exec(&mut self) -> Exec<'_> {
        match self {
            Conn::PostgresPooled(c) => Exec::Postgres(&mut *c),
            Conn::PostgresTx(c) => Exec::Postgres(c),
            Conn::SqlitePooled(c) => Exec::Sqlite(&mut *c),
            Conn::SqliteTx(c) => Exec::Sqlite(c),
        }
    }
}

/// Runs `f(args..)` of the calling module's `postgres` or `sqlite` submodule (the two compilations of
/// its SQL file) on the connection of `handle`, which is anything `Into<Handle>`: `&db` or `&mut tx`.
/// The dialect function receives the connection first.
#[macro_export]
macro_rules! dispatch {
    ($handle:expr, $f:ident ( $($arg:expr),* $(,)? )) => {{
        let handle: $crate::db::Handle<'_> = ::core::convert::Into::into($handle);
        let mut conn = handle.conn().await?;
        match conn.exec() {
            $crate::db::Exec::Postgres(c) => postgres::$f(c, $($arg),*).await,
            $crate::db::Exec::Sqlite(c) => sqlite::$f(c, $($arg),*).await,
        }
    }};
}
