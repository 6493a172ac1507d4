//! The relay's side of the outbox table: the rows to publish, and removing them once confirmed.
//!
//! One relay per database publishes at a time, so a share's messages go out in the order of the table
//! and none is published twice by two replicas of a service. On PostgreSQL the relay that holds a session advisory
//! lock leads, on a connection of its own taken out of the pool: when the process dies the connection
//! drops and the lock with it, and another replica takes over (a standby asks again every second, on a
//! fresh connection). A SQLite file belongs to one process.

use sqlx::{Connection, PgConnection, SqlitePool};

use crate::bus::port::Message;
use crate::bus::sql::Statements;
use crate::bus::turns::MAX_SHARES;
use crate::db::{now_millis, Database, StoreError};

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

    /// The topics with committed messages to relay.
    pub(super) async fn topics(&mut self) -> Result<Vec<String>, StoreError> {
        match self {
            Outbox::Postgres(conn) => Statements::<sqlx::Postgres>::pending_topics(conn).await,
            Outbox::Sqlite(pool) => {
                Statements::<sqlx::Sqlite>::pending_topics(&mut *pool.acquire().await?).await
            }
        }
    }

    /// The shares of `topic` with committed messages to relay, by name.
    pub(super) async fn shares(&mut self, topic: &str) -> Result<Vec<String>, StoreError> {
        let (now, most) = (now_millis(), MAX_SHARES);
        match self {
            Outbox::Postgres(conn) => {
                Statements::<sqlx::Postgres>::ready_shares(conn, topic, now, most).await
            }
            Outbox::Sqlite(pool) => {
                Statements::<sqlx::Sqlite>::ready_shares(
                    &mut *pool.acquire().await?,
                    topic,
                    now,
                    most,
                )
                .await
            }
        }
    }

    /// Up to `limit` committed messages of `share` in `topic`, oldest first, with their sequence
    /// numbers.
    pub(super) async fn pending(
        &mut self,
        topic: &str,
        share: &str,
        limit: i64,
    ) -> Result<Vec<(i64, Message)>, StoreError> {
        match self {
            Outbox::Postgres(conn) => {
                Statements::<sqlx::Postgres>::pending(conn, topic, share, limit).await
            }
            Outbox::Sqlite(pool) => {
                Statements::<sqlx::Sqlite>::pending(
                    &mut *pool.acquire().await?,
                    topic,
                    share,
                    limit,
                )
                .await
            }
        }
    }

    /// Removes the rows the broker confirmed.
    pub(super) async fn relayed(&mut self, seqs: &[i64]) -> Result<(), StoreError> {
        match self {
            Outbox::Postgres(conn) => Statements::<sqlx::Postgres>::relayed(conn, seqs).await,
            Outbox::Sqlite(pool) => {
                Statements::<sqlx::Sqlite>::relayed(&mut *pool.acquire().await?, seqs).await
            }
        }
    }

    /// Gives the lead up (closing the connection releases the lock).
    pub(super) async fn close(self) {
        if let Outbox::Postgres(conn) = self {
            let _ = conn.close().await;
        }
    }
}
