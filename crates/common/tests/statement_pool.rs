//! The PostgreSQL statement pool (`common::db::StatementPool`), through the handle the stores use: a
//! connection whose statement ran to the end, or ended in an error the server reported, is used again as
//! it is (no ping on the way back); one cut off midway is closed, never handed to the next statement.

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
