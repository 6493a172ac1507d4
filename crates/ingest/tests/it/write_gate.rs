//! On SQLite the ingestion service's writes take their turn at the process's write gate
//! (`common::db::WriteGate`) like every other writer of the process, instead of meeting them in
//! SQLite's busy handler: a write of events, the removal of expired events and the forgetting of old
//! insert ids each wait while another writer holds the gate, and go ahead once it is let go.

use std::time::Duration;

use common::db::Database;
use ingest::store::{self, Partitions};
use serde_json::json;

use crate::support::{now_ms, Backend, World};

/// How long a write is given to show that it waits.
const WAIT: Duration = Duration::from_millis(400);

/// Holds the gate, starts `write`, checks that it has not finished after [`WAIT`], lets the gate go and
/// gives what the write returned.
async fn waits_for_the_gate<T: Send + 'static>(
    db: &Database,
    what: &str,
    write: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    let turn = db.write_turn().await.unwrap();
    assert!(turn.is_some(), "SQLite has a write gate");
    let task = tokio::spawn(write);
    tokio::time::sleep(WAIT).await;
    assert!(
        !task.is_finished(),
        "{what} went ahead while another writer of the process held the gate"
    );
    drop(turn);
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap_or_else(|_| panic!("{what} did not go ahead once the gate was let go"))
        .unwrap()
}

#[tokio::test]
async fn on_sqlite_writes_of_events_wait_their_turn_at_the_write_gate() {
    let world = World::new(Backend::Sqlite).await;
    let db = world.ingest.service.state.db.clone();

    // A tracked batch.
    let (http, url, key) = (world.http.clone(), world.url(""), world.app_key.clone());
    let event = json!({"event_name": "waited", "user_id": "u", "event_timestamp_epoch": now_ms()});
    let answer = waits_for_the_gate(&db, "a write of events", async move {
        http.post(format!("{url}/v3/{key}/track"))
            .json(&json!({ "events": [event] }))
            .send()
            .await
            .unwrap()
            .json::<serde_json::Value>()
            .await
            .unwrap()
    })
    .await;
    assert_eq!(answer["results"]["stored"], json!(1), "{answer}");
    assert_eq!(world.all_events(&world.app_key).await.len(), 1);

    // The removal of expired events (nothing is that old, so nothing goes).
    let writer = db.clone();
    let removed = waits_for_the_gate(&db, "the removal of expired events", async move {
        store::drop_events_before(&writer, &Partitions::default(), 86_400_000).await
    })
    .await;
    assert_eq!(removed.unwrap(), 0);

    // The forgetting of insert ids seen long ago.
    let writer = db.clone();
    let forgotten = waits_for_the_gate(&db, "the forgetting of old insert ids", async move {
        store::forget_insert_ids(&writer, 86_400_000).await
    })
    .await;
    assert_eq!(forgotten.unwrap(), 0);
    assert_eq!(world.all_events(&world.app_key).await.len(), 1);
}
