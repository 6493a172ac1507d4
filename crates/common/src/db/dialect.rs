//! The two databases a store's statements are written for, once: each store gathers its statements in
//! `impl<D: Dialect> Statements<D>` blocks whose bounds say what they bind (`Binds`) and read (`Reads`),
//! and `dispatch!` calls them as `Statements::<sqlx::Postgres>` or `Statements::<sqlx::Sqlite>` on the
//! handle's connection. The few words of SQL the two spell differently are the trait's.

use sqlx::{Database, Encode, FromRow, Type};

/// A database the statements compile for: PostgreSQL or SQLite.
pub trait Dialect: sqlx::Database {
    /// Locks the rows a read returns until the transaction ends. SQLite has nothing to add: its
    /// transactions hold the write lock from their start (`BEGIN IMMEDIATE`), which already serializes
    /// every writer.
    const FOR_UPDATE: &'static str;
    /// Locks the rows a read returns, skipping those another transaction holds, so that concurrent
    /// consumers take different rows instead of waiting for each other. SQLite has one writer at a time.
    const SKIP_LOCKED: &'static str;
    /// A statement that serializes, until the transaction ends, the transactions that take the same key
    /// (`$1`, a string): a check before an insert cannot then interleave with another's. None on SQLite,
    /// which runs one writing transaction at a time.
    const KEY_LOCK: Option<&'static str>;

    /// How many rows a statement changed.
    fn rows_affected(done: &Self::QueryResult) -> u64;
}

/// A value a statement binds on database `D`, for as long as the statement lives (`'q`): a bound reads
/// `for<'q> i64: Binds<'q, D>`, or `for<'q> &'q str: Binds<'q, D>` for a string the statement borrows.
pub trait Binds<'q, D: Database>: Encode<'q, D> + Type<D> {}

impl<'q, D: Database, T: Encode<'q, D> + Type<D>> Binds<'q, D> for T {}

/// A row a statement reads on database `D`: a struct deriving `FromRow`, or a tuple (`(i64,)` for a
/// single value).
pub trait Reads<D: Database>: for<'r> FromRow<'r, D::Row> {}

impl<D: Database, T: for<'r> FromRow<'r, D::Row>> Reads<D> for T {}

impl Dialect for sqlx::Postgres {
    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const SKIP_LOCKED: &'static str = "FOR UPDATE SKIP LOCKED";
    const KEY_LOCK: Option<&'static str> = Some("SELECT pg_advisory_xact_lock(hashtext($1))");

    fn rows_affected(done: &sqlx::postgres::PgQueryResult) -> u64 {
        done.rows_affected()
    }
}

impl Dialect for sqlx::Sqlite {
    const FOR_UPDATE: &'static str = "";
    const SKIP_LOCKED: &'static str = "";
    const KEY_LOCK: Option<&'static str> = None;

    fn rows_affected(done: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        done.rows_affected()
    }
}
