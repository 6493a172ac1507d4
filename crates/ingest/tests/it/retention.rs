//! Retention (docs/ingest-api.md, Storage): with `retention_days` set, events older than that are
//! refused at `/track`, and the months past it are removed whole (their partitions dropped on
//! PostgreSQL), by the service itself and by `store::drop_events_before`; later months are untouched.

use std::time::Duration;

use common::backend_tests;
use common::db::Database;
use ingest::store::{self, Partitions};
use ingest::testing::{test_config, TestIngest};
use serde_json::{json, Value};

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
