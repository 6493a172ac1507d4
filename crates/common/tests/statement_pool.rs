//! The PostgreSQL statement pool (`common::db::StatementPool`), through the handle the stores use: a
//! connection whose statement ran to the end, or ended in an error the server reported, is used again as
//! it is (no ping on the way back); one cut off midway is closed, never handed to the next statement,
//! and the server ends the statement it was running instead of running it on for nobody.

use std::time::Duration;

use common::db::{Database, Exec, Handle, Settled, StoreError};
use common::testing::{Backend, TestDb};

/// Runs `sql` as a store function does (`dispatch!`): on a connection of the handle, then tells it how
/// the statement ended.
async fn run(db: &Database, sql: &str) -> Result<i32, StoreError> {
    let mut conn = Handle::from(db).conn().await?;
    let Exec::Postgres(c) = conn.exec() else {
        panic!("a PostgreSQL handle")
    };
    let result = sqlx::query_scalar::<_, i32>(sql)
        .fetch_one(c)
        .await
        .map_err(StoreError::from);
    conn.finish(result.connection_sound());
    result
}

async fn backend(db: &Database) -> i32 {
    run(db, "SELECT pg_backend_pid()").await.unwrap()
}

#[tokio::test]
async fn a_connection_is_reused_after_its_statement_and_closed_when_cut_off() {
    let test = TestDb::new(Backend::Postgres).await;
    // One connection in the statement pool, so every statement below gets the same one unless it was
    // closed.
    let db = Database::connect(&test.url, 1).await.unwrap();

    let first = backend(&db).await;
    assert_eq!(
        backend(&db).await,
        first,
        "an idle connection is handed out again"
    );

    let refused = run(&db, "SELECT 1 / 0").await;
    assert!(matches!(
        refused,
        Err(StoreError::Database(sqlx::Error::Database(_)))
    ));
    assert_eq!(
        backend(&db).await,
        first,
        "an error the server reported leaves the connection sound"
    );

    let cut_off = tokio::time::timeout(
        Duration::from_millis(200),
        run(&db, "SELECT 1 FROM pg_sleep(5)"),
    )
    .await;
    assert!(cut_off.is_err(), "the statement was cut off midway");
    let next = backend(&db).await;
    assert_ne!(
        next, first,
        "a connection whose statement was cut off is closed, not reused"
    );
    assert_eq!(backend(&db).await, next);
    db.close().await;
}

/// The backend of a transaction's connection.
async fn tx_backend(tx: &mut sqlx::Transaction<'_, sqlx::Postgres>) -> i32 {
    sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut **tx)
        .await
        .unwrap()
}

/// Whether backend `pid` is running a statement, as a connection of its own sees it.
async fn backend_busy(url: &str, pid: i32) -> bool {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let busy: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active')",
    )
    .bind(pid)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    busy
}

/// Waits up to `seconds` for backend `pid` to stop running its statement; whether it did.
async fn statement_ends(url: &str, pid: i32, seconds: u64) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    while tokio::time::Instant::now() < deadline {
        if !backend_busy(url, pid).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn the_server_ends_a_statement_whose_request_was_cut_off() {
    let test = TestDb::new(Backend::Postgres).await;
    let db = Database::connect(&test.url, 2).await.unwrap();

    // A single statement of the statement pool (one connection, so the pid is the one that runs it).
    let pid = backend(&db).await;
    let cut_off = tokio::time::timeout(
        Duration::from_millis(200),
        run(&db, "SELECT 1 FROM pg_sleep(60)"),
    )
    .await;
    assert!(cut_off.is_err());
    assert!(
        statement_ends(&test.url, pid, 10).await,
        "the backend of a statement cut off midway ran on after its client hung up"
    );

    // A statement inside a transaction, on the transactions' pool.
    let Database::Postgres(pool, _) = &db else {
        panic!("a PostgreSQL database")
    };
    let pid = {
        let mut tx = pool.begin().await.unwrap();
        let pid = tx_backend(&mut tx).await;
        let cut_off = tokio::time::timeout(
            Duration::from_millis(200),
            sqlx::query("SELECT 1 FROM pg_sleep(60)").execute(&mut *tx),
        )
        .await;
        assert!(cut_off.is_err());
        assert!(
            backend_busy(&test.url, pid).await,
            "the statement is running"
        );
        pid
    };
    assert!(
        statement_ends(&test.url, pid, 10).await,
        "the backend of a transaction cut off midway ran on after its client hung up"
    );

    // A transaction dropped after an error its statement got, between statements, keeps its
    // connection: the next transaction is on the same backend.
    let pid = {
        let mut tx = pool.begin().await.unwrap();
        let pid = tx_backend(&mut tx).await;
        assert!(sqlx::query("SELECT 1 / 0").execute(&mut *tx).await.is_err());
        pid
    };
    let mut tx = pool.begin().await.unwrap();
    assert_eq!(
        tx_backend(&mut tx).await,
        pid,
        "a settled connection is kept"
    );
    tx.rollback().await.unwrap();
    db.close().await;
}
