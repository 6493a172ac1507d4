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

/// Holds the gate, runs `write` for [`WAIT`] and checks that it has not finished, lets the gate go and
/// gives what the write returned.
async fn waits_for_the_gate<T>(
    db: &Database,
    what: &str,
    write: impl std::future::Future<Output = T>,
) -> T {
    let turn = db.write_turn().await.unwrap();
    assert!(turn.is_some(), "SQLite has a write gate");
    let mut write = std::pin::pin!(write);
    assert!(
        tokio::time::timeout(WAIT, &mut write).await.is_err(),
        "{what} went ahead while another writer of the process held the gate"
    );
    drop(turn);
    tokio::time::timeout(Duration::from_secs(10), write)
        .await
        .unwrap_or_else(|_| panic!("{what} did not go ahead once the gate was let go"))
}

#[tokio::test]
async fn on_sqlite_writes_of_events_wait_their_turn_at_the_write_gate() {
    let world = World::new(Backend::Sqlite).await;
    let db = world.ingest.service.state.db.clone();

    // A tracked batch.
    let event = json!({"event_name": "waited", "user_id": "u", "event_timestamp_epoch": now_ms()});
    let answer = waits_for_the_gate(
        &db,
        "a write of events",
        world.track(&world.app_key, json!([event])),
    )
    .await;
    assert_eq!(answer["results"]["stored"], json!(1), "{answer}");
    assert_eq!(world.all_events(&world.app_key).await.len(), 1);

    // The removal of expired events (nothing is that old, so nothing goes).
    let removed = waits_for_the_gate(
        &db,
        "the removal of expired events",
        store::drop_events_before(&db, &Partitions::default(), 86_400_000),
    )
    .await;
    assert_eq!(removed.unwrap(), 0);

    // The forgetting of insert ids seen long ago.
    let forgotten = waits_for_the_gate(
        &db,
        "the forgetting of old insert ids",
        store::forget_insert_ids(&db, 86_400_000),
    )
    .await;
    assert_eq!(forgotten.unwrap(), 0);
    assert_eq!(world.all_events(&world.app_key).await.len(), 1);
}
