//! The relay's side of the outbox table: the rows to publish, and removing them once confirmed.
//!
//! One relay per database publishes at a time, so messages go out in the order of the table and are not
//! published twice by two replicas of a service. On PostgreSQL the relay that holds a session advisory
//! lock leads, on a connection of its own taken out of the pool: when the process dies the connection
//! drops and the lock with it, and another replica takes over (a standby asks again every second, on a
//! fresh connection). A SQLite file belongs to one process.

use sqlx::{Connection, PgConnection, SqlitePool};

use crate::bus::{postgres, sqlite, Message};
use crate::db::{Database, StoreError};

/// The advisory lock key of the relay ("bus_rela" in ASCII). Advisory locks are per database, so
/// services sharing a PostgreSQL server each have their own relay.
const RELAY_LOCK: i64 = 0x6275_735f_7265_6c61;

pub(super) enum Outbox {
    Postgres(PgConnection),
    Sqlite(SqlitePool),
}

impl Outbox {
    /// The outbox if this relay leads; `None` while another relay does.
    pub(super) async fn lead(db: &Database) -> Result<Option<Outbox>, StoreError> {
        match db {
            Database::Postgres(pool, _) => {
                // Out of the pool: a pooled connection would go back to the pool still holding the lock.
                let mut conn = pool.acquire().await?.detach();
                let leads: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(RELAY_LOCK)
                    .fetch_one(&mut conn)
                    .await?;
                if leads {
                    Ok(Some(Outbox::Postgres(conn)))
                } else {
                    let _ = conn.close().await;
                    Ok(None)
                }
            }
            Database::Sqlite(pool, ..) => Ok(Some(Outbox::Sqlite(pool.clone()))),
        }
    }

    /// Up to `limit` committed messages, oldest first, with their sequence numbers.
    pub(super) async fn pending(&mut self, limit: i64) -> Result<Vec<(i64, Message)>, StoreError> {
        match self {
            Outbox::Postgres(conn) => postgres::pending(conn, limit).await,
            Outbox::Sqlite(pool) => sqlite::pending(&mut *pool.acquire().await?, limit).await,
        }
    }

    /// Removes the rows the broker confirmed.
    pub(super) async fn relayed(&mut self, seqs: &[i64]) -> Result<(), StoreError> {
        match self {
            Outbox::Postgres(conn) => postgres::relayed(conn, seqs).await,
            Outbox::Sqlite(pool) => sqlite::relayed(&mut *pool.acquire().await?, seqs).await,
        }
    }

    /// Gives the lead up (closing the connection releases the lock).
    pub(super) async fn close(self) {
        if let Outbox::Postgres(conn) = self {
            let _ = conn.close().await;
        }
    }
}
