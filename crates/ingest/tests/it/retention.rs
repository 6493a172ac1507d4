//! Retention (docs/ingest-api.md, Storage): with `retention_days` set, events older than that are
//! refused at `/track`, and the months past it are removed whole (their partitions dropped on
//! PostgreSQL), by the service itself and by `store::drop_events_before`; later months are untouched.
//! On PostgreSQL a month is detached from the table without holding back its reads and writes, and a
//! detach that waited too long for the reads under way is finished by the next round. The same round
//! creates this month's and next month's partitions ahead of their events, so that a month's first
//! write does not wait behind a detach.

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

/// A session of its own holding the lock partitions are created and dropped under, as a detach under
/// way does (at most 5 s there; here until the connection is closed).
async fn holding_the_partition_lock(pool: &PgPool) -> sqlx::pool::PoolConnection<sqlx::Postgres> {
    let mut holder = pool.acquire().await.unwrap();
    sqlx::query("SELECT pg_advisory_lock(6001)")
        .execute(&mut *holder)
        .await
        .unwrap();
    holder
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_month_already_there_is_not_created_again_behind_a_detach() {
    let (_world, _db, pool) = january_and_now().await;
    let holder = holding_the_partition_lock(&pool).await;
    // A replica that has not written this month yet (a new `Partitions`) finds its partition attached
    // and goes on, where creating it would wait for the lock.
    let fresh = Partitions::default();
    let noted = tokio::time::timeout(
        Duration::from_secs(30),
        fresh.ensure(&pool, [now_ms()].into_iter()),
    )
    .await;
    assert!(
        matches!(noted, Ok(Ok(()))),
        "an attached month waited for the lock: {noted:?}"
    );
    // A month without a partition is still created only under the lock.
    let may_2031 = ms("2031-05-10T00:00:00Z");
    let waiting = tokio::spawn(async move {
        let fresh = Partitions::default();
        fresh.ensure(&pool, [may_2031].into_iter()).await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !waiting.is_finished(),
        "a new month was created without the lock"
    );
    holder.close().await.unwrap();
    waiting.await.unwrap().unwrap();
}

async fn this_and_next_month_are_prepared_ahead(backend: Backend) {
    let world = World::new(backend).await;
    let db = world.ingest.service.state.db.clone();
    // Across a year's end; twice, as every hour does.
    let partitions = Partitions::default();
    for _ in 0..2 {
        store::prepare_months(&db, &partitions, ms("2030-12-31T23:59:59Z"))
            .await
            .unwrap();
    }
    let made = self::partitions(&db).await;
    if backend == Backend::Postgres {
        for month in ["ingest_events_p203012", "ingest_events_p203101"] {
            assert!(made.contains(&month.to_string()), "{month} in {made:?}");
        }
        assert!(!made.contains(&"ingest_events_p203102".to_string()));
        // The service itself prepares the current month and the next at start, before any event.
        let now = chrono::Utc::now();
        let next = now.checked_add_months(chrono::Months::new(1)).unwrap();
        let expected: Vec<String> = [now, next]
            .iter()
            .map(|t| format!("ingest_events_p{}", t.format("%Y%m")))
            .collect();
        let mut made = Vec::new();
        for _ in 0..100 {
            made = self::partitions(&db).await;
            if expected.iter().all(|name| made.contains(name)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the service did not prepare {expected:?}: {made:?}");
    } else {
        assert!(made.is_empty());
    }
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
            // Counted among the test's own months: the service prepares the current ones meanwhile.
            let old = |names: &[String]| {
                names
                    .iter()
                    .filter(|n| n.as_str() < "ingest_events_p2025")
                    .count()
            };
            assert_eq!(old(&after), old(&before) - 1);
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
    this_and_next_month_are_prepared_ahead,
    months_before_the_cutoff_are_removed_whole,
    a_service_keeping_30_days_refuses_older_events_and_removes_past_months,
);
