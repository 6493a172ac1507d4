//! `/track` answers what its sink did, whatever the sink: a second ingestion service on the same
//! database, its events going to a sink that answers as each test tells it.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::backend_tests;
use ingest::model::NewEvent;
use ingest::sink::{EventSink, WriteError};
use ingest::store::Fresh;
use ingest::testing::{test_config, TestIngest};
use serde_json::{json, Value};

use crate::support::{now_ms, Backend, World};

backend_tests!(the_sender_is_told_what_the_sink_did);

/// Answers every write with `outcome`, and keeps the names of the events it was given.
struct Answering {
    outcome: Result<Fresh, WriteError>,
    given: Mutex<Vec<String>>,
}

#[async_trait]
impl EventSink for Answering {
    async fn write(&self, events: Vec<NewEvent>, _now_ms: i64) -> Result<Fresh, WriteError> {
        let names = events.iter().map(|e| e.event_name.clone());
        self.given.lock().unwrap().extend(names);
        self.outcome.clone()
    }
}

async fn the_sender_is_told_what_the_sink_did(backend: Backend) {
    let world = World::new(backend).await;
    let at = now_ms() - 60_000;
    let batch = json!([
        {"event_name": "call_started", "user_id": "u-1", "event_timestamp_epoch": at},
        {"event_name": "call_ended", "user_id": "u-1", "event_timestamp_epoch": at + 1},
    ]);
    let gone = format!(
        "unknown app key {:?}: the project was deleted; nothing was stored",
        world.app_key
    );
    let cases: [(Result<Fresh, WriteError>, Value); 3] = [
        (
            Ok(vec![true, false]),
            json!({"stored": 1, "duplicates": 1, "rejected": 0, "failed_events": []}),
        ),
        (
            Err(WriteError::Unavailable("try again".into())),
            json!({"stored": 0, "duplicates": 0, "rejected": 0, "failed_events": [],
                   "error": "try again", "retry": true}),
        ),
        (
            Err(WriteError::ProjectGone),
            json!({"stored": 0, "duplicates": 0, "rejected": 0, "failed_events": [],
                   "error": gone, "retry": false}),
        ),
    ];
    for (outcome, results) in cases {
        let sink = Arc::new(Answering {
            outcome,
            given: Mutex::new(Vec::new()),
        });
        let config = test_config(&world.auth.url, &world.auth.db.url);
        let other =
            TestIngest::start_with_sink(config, world.auth.db.db.clone(), sink.clone()).await;
        let answer = world
            .track_to(&other.url, &world.app_key, batch.clone())
            .await;
        assert_eq!(answer["results"], results, "{answer}");
        assert_eq!(answer["status"], json!(results.get("error").is_none()));
        assert_eq!(*sink.given.lock().unwrap(), ["call_started", "call_ended"]);
    }
    assert!(
        world.all_events(&world.app_key).await.is_empty(),
        "nothing reached the database"
    );
}
