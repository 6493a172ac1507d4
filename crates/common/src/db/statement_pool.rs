//! Connections for the statements a PostgreSQL store runs outside a transaction. sqlx's pool pings every
//! connection it takes back, a round trip in a task of its own, in case the statement before it was cut
//! off midway and left answers unread; on the administration API's read that misses its cache (one
//! statement per request) that ping was a second round trip for every request. Here a connection goes
//! back to the set untested when its store function said it is sound (`Leased::finish`: an answer, or an
//! error the server reported), and is closed when the connection itself failed or the function was cut
//! off (dropped unfinished), so no connection in the set is ever in doubt.
//! A connection idle longer than `PING_AFTER_IDLE` is pinged on its way out, as the pool's are.
//!
//! Transactions keep using sqlx's pool: the set is sized for short single statements.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::PING_AFTER_IDLE;

/// Up to `size` connections, opened when first needed, handed out in the order they were asked for.
#[derive(Clone)]
pub struct StatementPool(Arc<Inner>);

struct Inner {
    options: PgConnectOptions,
    permits: Arc<Semaphore>,
    idle: Mutex<Vec<(PgConnection, Instant)>>,
    acquire_timeout: Duration,
}

impl std::fmt::Debug for StatementPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatementPool")
            .field("idle", &self.0.idle.lock().len())
            .finish()
    }
}

impl StatementPool {
    pub fn new(options: PgConnectOptions, size: usize, acquire_timeout: Duration) -> StatementPool {
        StatementPool(Arc::new(Inner {
            options,
            permits: Arc::new(Semaphore::new(size.max(1))),
            idle: Mutex::new(Vec::new()),
            acquire_timeout,
        }))
    }

    /// A connection for one store function's statements: an idle one, or a new one.
    pub async fn acquire(&self) -> Result<Leased, sqlx::Error> {
        let permit = tokio::time::timeout(
            self.0.acquire_timeout,
            self.0.permits.clone().acquire_owned(),
        )
        .await
        .map_err(|_| sqlx::Error::PoolTimedOut)?
        .map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self.0.idle.lock().pop();
        let conn = match idle {
            Some((mut conn, since)) if since.elapsed() >= PING_AFTER_IDLE => {
                match conn.ping().await {
                    Ok(()) => conn,
                    Err(_) => self.0.connect().await?,
                }
            }
            Some((conn, _)) => conn,
            None => self.0.connect().await?,
        };
        Ok(Leased {
            conn: Some(conn),
            pool: self.0.clone(),
            sound: false,
            _permit: permit,
        })
    }

    /// Refuses further statements and closes the idle connections (those in use close when dropped).
    pub async fn close(&self) {
        self.0.permits.close();
        let idle: Vec<_> = self.0.idle.lock().drain(..).collect();
        for (conn, _) in idle {
            let _ = conn.close().await;
        }
    }
}

impl Inner {
    async fn connect(&self) -> Result<PgConnection, sqlx::Error> {
        let mut conn = PgConnection::connect_with(&self.options).await?;
        super::watch_for_hang_up(&mut conn).await?;
        Ok(conn)
    }
}

/// A connection taken from a `StatementPool`. Back to the set when dropped after `finish(true)`; closed
/// otherwise.
pub struct Leased {
    conn: Option<PgConnection>,
    pool: Arc<Inner>,
    sound: bool,
    _permit: OwnedSemaphorePermit,
}

impl Leased {
    pub fn connection(&mut self) -> &mut PgConnection {
        self.conn
            .as_mut()
            .expect("a leased connection until it is dropped")
    }

    /// Tells whether the statements left the connection fit for the next ones (`Settled`).
    pub fn finish(&mut self, sound: bool) {
        self.sound = sound;
    }
}

impl Drop for Leased {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.sound && !self.pool.permits.is_closed() {
                self.pool.idle.lock().push((conn, Instant::now()));
            }
            // Otherwise the connection is dropped, which closes its socket: a statement cut off midway
            // may have left answers unread, and a failed transport or read leaves the connection in doubt.
            // The server then ends a statement still running within a second (`watch_for_hang_up`).
        }
    }
}
