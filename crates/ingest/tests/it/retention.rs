//! Retention (docs/ingest-api.md, Storage): with `retention_days` set, events older than that are
//! refused at `/track`, and the months past it are removed whole (their partitions dropped on
//! PostgreSQL), by the service itself and by `store::drop_events_before`; later months are untouched.
//! On PostgreSQL a month is detached from the table without holding back its reads and writes, and a
//! detach that waited too long for the reads under way is finished by the next round.

use std::time::Duration;

use common::backend_tests;
use common::db::Database;
use ingest::store::{self, Partitions};
use ingest::testing::{test_config, TestIngest};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{now_ms, Backend, World};

fn ms(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .timestamp_millis()
}

fn event(name: &str, time: i64) -> Value {
    json!({"event_name": name, "user_id": "u", "event_timestamp_epoch": time})
}

/// The event names stored for the project, oldest first.
async fn names(world: &World, app_key: &str) -> Vec<String> {
    world
        .all_events(app_key)
        .await
        .iter()
        .map(|e| e["event_name"].as_str().unwrap().to_string())
        .collect()
}

/// The service's partitions of `ingest_events` on PostgreSQL.
async fn partitions(db: &Database) -> Vec<String> {
    let Database::Postgres(pool, _) = db else {
        return Vec::new();
    };
    let mut names: Vec<String> = sqlx::query_scalar(
        "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = 'ingest_events'::regclass",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    names.sort();
    names
}

/// Whether the partition `name` waits for the end of a detach that has begun.
async fn detach_pending(pool: &PgPool, name: &str) -> bool {
    sqlx::query_scalar(
        "SELECT i.inhdetachpending FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE c.relname = $1",
    )
    .bind(name)
    .fetch_optional(pool)
    .await
    .unwrap()
    .unwrap_or(false)
}

/// Waits until a detach of the partition `name` has begun (and waits for the reads using it).
async fn until_detach_pending(pool: &PgPool, name: &str) {
    for _ in 0..200 {
        if detach_pending(pool, name).await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no detach of {name} began");
}

/// A project with an event in January 2024 and one now, on PostgreSQL, and its database's pool.
async fn january_and_now() -> (World, Database, PgPool) {
    let world = World::new(Backend::Postgres).await;
    let batch = json!([
        event("january", ms("2024-01-15T12:00:00Z")),
        event("now", now_ms())
    ]);
    assert_eq!(
        world.track(&world.app_key, batch).await["results"]["stored"],
        json!(2)
    );
    let db = world.ingest.service.state.db.clone();
    let Database::Postgres(pool, _) = &db else {
        unreachable!("a PostgreSQL world");
    };
    let pool = pool.clone();
    (world, db, pool)
}

/// A transaction that has read the whole table, as a page of events does, and holds it until it ends.
async fn reading(pool: &PgPool) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let mut reader = pool.begin().await.unwrap();
    sqlx::query("SELECT count(*) FROM ingest_events")
        .fetch_one(&mut *reader)
        .await
        .unwrap();
    reader
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_removing_a_month_holds_back_no_read_or_write() {
    let (world, db, pool) = january_and_now().await;
    let reader = reading(&pool).await;
    let dropping = tokio::spawn(async move {
        store::drop_events_before(&db, &Partitions::default(), ms("2024-02-01T00:00:00Z")).await
    });
    // The month is being detached; it waits for the read under way, and meanwhile the table is
    // written and read as usual.
    until_detach_pending(&pool, "ingest_events_p202401").await;
    let answer = world
        .track(&world.app_key, json!([event("during", now_ms())]))
        .await;
    assert_eq!(answer["results"]["stored"], json!(1), "{answer}");
    let mut left = names(&world, &world.app_key).await;
    left.sort();
    assert_eq!(left, ["during", "now"]);
    assert!(
        !dropping.is_finished(),
        "the drop did not wait for the read"
    );
    // Once the read ends, the month goes.
    reader.commit().await.unwrap();
    assert_eq!(dropping.await.unwrap().unwrap(), 1);
    let db = world.ingest.service.state.db.clone();
    assert!(!partitions(&db)
        .await
        .contains(&"ingest_events_p202401".to_string()));
    assert!(!detach_pending(&pool, "ingest_events_p202401").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_detach_waiting_too_long_is_finished_by_the_next_round() {
    let (world, db, pool) = january_and_now().await;
    // A read that outlasts the 5 s a detach waits for it: the round gives up, the month left pending.
    let reader = reading(&pool).await;
    let cutoff = ms("2024-02-01T00:00:00Z");
    let given_up = store::drop_events_before(&db, &Partitions::default(), cutoff).await;
    assert!(given_up.is_err(), "{given_up:?}");
    assert!(detach_pending(&pool, "ingest_events_p202401").await);
    reader.commit().await.unwrap();
    // The next round finishes the detach and drops the month; the rest is untouched.
    let removed = store::drop_events_before(&db, &Partitions::default(), cutoff)
        .await
        .unwrap();
    assert_eq!(removed, 1);
    assert!(!partitions(&db)
        .await
        .contains(&"ingest_events_p202401".to_string()));
    assert_eq!(names(&world, &world.app_key).await, ["now"]);
}

async fn months_before_the_cutoff_are_removed_whole(backend: Backend) {
    let world = World::new(backend).await;
    let batch = json!([
        event("january", ms("2024-01-15T12:00:00Z")),
        event("january-end", ms("2024-01-31T23:59:59.999Z")),
        event("february", ms("2024-02-01T00:00:00Z")),
        event("now", now_ms()),
    ]);
    assert_eq!(
        world.track(&world.app_key, batch).await["results"]["stored"],
        json!(4)
    );
    let db = world.ingest.service.state.db.clone();
    let before = partitions(&db).await;

    let removed =
        store::drop_events_before(&db, &Partitions::default(), ms("2024-02-01T00:00:00Z"))
            .await
            .unwrap();
    assert_eq!(names(&world, &world.app_key).await, ["february", "now"]);
    match backend {
        Backend::Postgres => {
            assert_eq!(removed, 1, "one month");
            let after = partitions(&db).await;
            assert!(
                before.contains(&"ingest_events_p202401".to_string()),
                "{before:?}"
            );
            assert!(
                !after.contains(&"ingest_events_p202401".to_string()),
                "{after:?}"
            );
            assert!(
                after.contains(&"ingest_events_p202402".to_string()),
                "{after:?}"
            );
            assert_eq!(after.len(), before.len() - 1);
        }
        Backend::Sqlite => assert_eq!(removed, 2, "two events"),
    }
    // Nothing left to remove: a second round changes nothing.
    let again = store::drop_events_before(&db, &Partitions::default(), ms("2024-02-01T00:00:00Z"))
        .await
        .unwrap();
    assert_eq!(again, 0);
    assert_eq!(names(&world, &world.app_key).await, ["february", "now"]);
}

async fn a_service_keeping_30_days_refuses_older_events_and_removes_past_months(backend: Backend) {
    // Stored while everything is kept.
    let world = World::new(backend).await;
    let day = 86_400_000;
    let batch = json!([
        event("old", ms("2024-03-10T00:00:00Z")),
        event("recent", now_ms() - 10 * day),
    ]);
    assert_eq!(
        world.track(&world.app_key, batch).await["results"]["stored"],
        json!(2)
    );

    // A replica on the same database that keeps 30 days: its first round removes the old month.
    let db = world.ingest.service.state.db.clone();
    let mut config = test_config(&world.auth.url, &world.auth.db.url);
    config.retention_days = 30;
    let keeping = TestIngest::start(config, db.clone()).await;
    let mut left = Vec::new();
    for _ in 0..100 {
        left = names(&world, &world.app_key).await;
        if left == ["recent"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, ["recent"]);
    if backend == Backend::Postgres {
        assert!(!partitions(&db)
            .await
            .contains(&"ingest_events_p202403".to_string()));
    }

    // It refuses an event older than 30 days, naming the rule, and stores the rest of the batch.
    let batch = json!([
        event("too-old", now_ms() - 31 * day),
        event("fine", now_ms() - 29 * day)
    ]);
    let answer = world.track_to(&keeping.url, &world.app_key, batch).await;
    assert_eq!(answer["results"]["stored"], json!(1), "{answer}");
    assert_eq!(answer["results"]["rejected"], json!(1), "{answer}");
    let failed = &answer["results"]["failed_events"][0];
    assert_eq!(failed["index"], json!(0), "{answer}");
    assert_eq!(failed["field"], json!("event_timestamp_epoch"), "{answer}");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("older than the 30 days events are kept"),
        "{answer}"
    );
    assert_eq!(names(&world, &world.app_key).await, ["fine", "recent"]);
}

backend_tests!(
    months_before_the_cutoff_are_removed_whole,
    a_service_keeping_30_days_refuses_older_events_and_removes_past_months,
);
