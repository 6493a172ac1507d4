//! A company's reads take a fair share of the service (docs/operations.md, Sharing the platform between
//! companies): a burst of one company's reads that hang in the database holds only its own share of the
//! connections, so another company's read is answered meanwhile, and the burst is answered once the
//! database lets it go. On PostgreSQL, whose table lock makes the reads hang where a real heavy read
//! would be slow.

use std::time::Duration;

use common::db::Database;
use serde_json::json;

use crate::support::{eventually, Backend, Stack, World, COMPANY, ORG};

/// evil's reads at once: more than the test database's connections for single statements.
const BURST: usize = 8;

/// How many statements wait for the lock on the daily rollup, in the test's database.
async fn waiting_on_the_rollup(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks WHERE NOT granted \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND relation = 'analytics_daily_agents'::regclass",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_one_companys_reads_leaves_room_for_another_company() {
    let world = World::with(Stack::Embedded(Backend::Postgres), |c| {
        c.reads_per_company = 2;
    })
    .await;
    let Database::Postgres(pool, _) = &world.auth.db.db else {
        unreachable!("a PostgreSQL world");
    };
    let evil = world.other_company("evil").await;
    for (path, body) in [
        ("/config/evil".to_string(), json!({})),
        (format!("/config/evil/{ORG}"), json!({"timezone": "UTC"})),
    ] {
        let a = world.send_as(Some(&evil), "PUT", &path, Some(body)).await;
        assert_eq!(a.status, 200, "{path}: {}", a.text);
    }
    let a = world
        .send("PUT", &format!("/config/{COMPANY}"), Some(json!({})))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);

    // The daily rollup is locked: every read of evil's statistics waits in the database.
    let mut lock = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE analytics_daily_agents IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *lock)
        .await
        .unwrap();
    let path = format!("/stats/evil/{ORG}?daterange=20261120-20261120");
    let burst: Vec<_> = (0..BURST)
        .map(|_| {
            let url = world.url(&path, Some(&evil));
            tokio::spawn(async move { reqwest::get(url).await.unwrap().status().as_u16() })
        })
        .collect();
    eventually(|| async { (waiting_on_the_rollup(pool).await >= 2).then_some(()) }).await;
    // The rest of the burst has had time to reach the database too, had it been let through.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        waiting_on_the_rollup(pool).await,
        2,
        "evil holds its share of the connections, no more"
    );

    let acme = world.send("GET", &format!("/config/{COMPANY}"), None).await;
    assert_eq!(
        acme.status, 200,
        "acme is answered meanwhile: {}",
        acme.text
    );
    assert!(
        burst.iter().all(|read| !read.is_finished()),
        "evil's reads still wait"
    );
    let metrics = world.send("GET", "/metrics", None).await.text;
    let waiting = format!(
        "reads_waiting{{company=\"evil\",service=\"analytics\"}} {}",
        BURST - 2
    );
    assert!(
        metrics.lines().any(|l| l == waiting),
        "the operator sees whose reads wait ({waiting}): {metrics}"
    );

    lock.rollback().await.unwrap();
    for read in burst {
        assert_eq!(
            read.await.unwrap(),
            200,
            "every read of the burst is answered"
        );
    }
}
