//! `GET /v3/<app_key>/events`: filters, pages, and who may read.

use common::backend_tests;
use serde_json::{json, Value};

use crate::support::{Backend, World};

backend_tests!(
    events_are_filtered_by_time_and_name_and_paged_in_order,
    only_a_token_of_the_projects_company_with_events_read_reads,
    wrong_parameters_are_named,
);

const DAY: i64 = 86_400_000;
const START: i64 = 1_795_132_800_000; // 2026-11-20T00:00:00Z

async fn events_are_filtered_by_time_and_name_and_paged_in_order(backend: Backend) {
    let world = World::new(backend).await;
    // Three days, across a month boundary on PostgreSQL's partitions too (one event in October).
    let mut batch: Vec<Value> = (0..30)
        .map(|i| {
            json!({"event_name": if i % 3 == 0 { "click" } else { "view" }, "user_id": "u",
                   "event_timestamp_epoch": START + (i % 3) * DAY + i * 1000, "n": i})
        })
        .collect();
    batch.push(
        json!({"event_name": "click", "user_id": "u", "event_timestamp_epoch": "31/Oct/2026"}),
    );
    assert_eq!(
        world.track(&world.app_key, json!(batch)).await["results"]["stored"],
        json!(31)
    );

    let all = world.all_events(&world.app_key).await;
    assert_eq!(all.len(), 31);
    let times: Vec<i64> = all
        .iter()
        .map(|e| e["event_timestamp_epoch"].as_i64().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "oldest first: {times:?}"
    );

    let (status, day) = world
        .events(
            &world.app_key,
            &format!("from={}&to={}", START + DAY, START + 2 * DAY),
            &world.token,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(day["events"].as_array().unwrap().len(), 10);
    let (_, clicks) = world
        .events(
            &world.app_key,
            "event_name=click&from=2026-11-20T00:00:00Z",
            &world.token,
        )
        .await;
    assert_eq!(
        clicks["events"].as_array().unwrap().len(),
        10,
        "the October click is before from"
    );

    // Pages of 7 give back every event exactly once.
    let mut seen = Vec::new();
    let mut query = "limit=7".to_string();
    let mut pages = 0;
    loop {
        let (status, page) = world.events(&world.app_key, &query, &world.token).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        let events = page["events"].as_array().unwrap();
        assert!(events.len() <= 7);
        seen.extend(events.iter().map(|e| e["id"].as_str().unwrap().to_string()));
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("limit=7&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    let ids: Vec<String> = all
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, ids);
}

async fn only_a_token_of_the_projects_company_with_events_read_reads(backend: Backend) {
    let world = World::new(backend).await;
    world
        .track(&world.app_key, json!([{"event_name": "secret", "user_id": "u", "event_timestamp_epoch": "2026-11-20"}]))
        .await;
    let other = world.other_company_token().await;
    let (status, body) = world.events(&world.app_key, "", &other).await;
    assert_eq!(
        (status, body["code"].clone()),
        (404, json!("not_found")),
        "another company learns nothing"
    );

    let unscoped = world.token_with_scope("analytics:read").await;
    let (status, body) = world.events(&world.app_key, "", &unscoped).await;
    assert_eq!((status, body["code"].clone()), (403, json!("forbidden")));

    let mut forged = world.token.clone();
    forged.pop();
    forged.push(if world.token.ends_with('A') { 'B' } else { 'A' });
    let (status, body) = world.events(&world.app_key, "", &forged).await;
    assert_eq!(
        (status, body["code"].clone()),
        (401, json!("invalid_token"))
    );

    let response = world
        .http
        .get(world.url(&format!("/v3/{}/events", world.app_key)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    let reader = world.token_with_scope("events:read").await;
    let (status, body) = world.events(&world.app_key, "", &reader).await;
    assert_eq!(status, 200);
    assert_eq!(body["events"][0]["event_name"], json!("secret"));
}

async fn wrong_parameters_are_named(backend: Backend) {
    let world = World::new(backend).await;
    for (query, code, field) in [
        ("limit=0", "invalid_limit", None),
        ("limit=1001", "invalid_limit", None),
        ("cursor=nonsense", "invalid_cursor", None),
        ("from=yesterday", "invalid_field", Some("from")),
        ("to=2026-13-01", "invalid_field", Some("to")),
    ] {
        let (status, body) = world.events(&world.app_key, query, &world.token).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["code"], json!(code), "{query}: {body}");
        if let Some(field) = field {
            assert_eq!(body["field"], json!(field), "{query}");
        }
    }
    // Sent empty, a cursor is left out: the first page.
    let (status, body) = world.events(&world.app_key, "cursor=", &world.token).await;
    assert_eq!(status, 200, "{body}");
}

/// How many backends of the test's database wait for a lock in a statement reading `ingest_events`.
async fn reads_waiting(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%ingest_events%'",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

/// A page read whose request is cut off midway (the client gone, the handler dropped) ends on the server
/// too, rather than running on, holding its connection, until it finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_page_read_cut_off_midway_ends_on_the_server() {
    use common::db::Database;
    use ingest::store::{self, EventQuery};
    use std::time::Duration;

    let world = World::new(Backend::Postgres).await;
    let db = world.ingest.service.state.db.clone();
    let Database::Postgres(pool, _) = &db else {
        unreachable!("a PostgreSQL world");
    };
    // The table locked by another transaction, so that a read waits.
    let mut locker = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE ingest_events IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *locker)
        .await
        .unwrap();
    let query = EventQuery {
        app_key: &world.app_key,
        from_ms: START,
        to_ms: START + DAY,
        event_name: None,
        after: (START, 0),
        limit: 10,
    };
    let cut_off =
        tokio::time::timeout(Duration::from_millis(300), store::events(&db, &query)).await;
    assert!(cut_off.is_err(), "the read waited for the lock");
    assert_eq!(reads_waiting(pool).await, 1, "the read is under way");
    let mut waiting = 1;
    for _ in 0..100 {
        waiting = reads_waiting(pool).await;
        if waiting == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        waiting, 0,
        "the read cut off midway ran on after its client had gone"
    );
    locker.rollback().await.unwrap();
}
