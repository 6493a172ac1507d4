//! A metadata worker held up (paused, or waiting on the network) past its claim never writes an older
//! change over the newer one of the writer that took the call over: held before its read, it finds its
//! claim gone and writes nothing; held between its read and its write, its conditional write finds the
//! transcript it read replaced and changes nothing (docs/analytics-api.md, Metadata).

use std::sync::Arc;

use analytics::{AnalyticsState, Ports};
use analytics_store as store;
use async_trait::async_trait;
use common::objects::{Listed, ObjectError, ObjectStore, Version};
use serde_json::json;
use tokio::sync::{Notify, Semaphore};

use crate::support::*;

/// Where the held worker stops.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// Before it reads the transcript.
    Read,
    /// After it read the transcript and checked its claim, before it writes.
    Write,
}

/// The service's object store, but the first read or write (`step`) of a transcript waits until the test
/// lets it go: a worker held up there.
struct HeldStore {
    inner: Arc<dyn ObjectStore>,
    step: Step,
    reached: Notify,
    go: Semaphore,
}

impl HeldStore {
    fn new(inner: Arc<dyn ObjectStore>, step: Step) -> Arc<HeldStore> {
        Arc::new(HeldStore {
            inner,
            step,
            reached: Notify::new(),
            go: Semaphore::new(0),
        })
    }

    async fn hold(&self, step: Step) {
        if step == self.step {
            self.reached.notify_one();
            self.go.acquire().await.unwrap().forget();
        }
    }
}

#[async_trait]
impl ObjectStore for HeldStore {
    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), ObjectError> {
        self.inner.put(key, bytes).await
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ObjectError> {
        self.inner.get(key).await
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, ObjectError> {
        self.inner.size(key).await
    }

    async fn get_range(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, ObjectError> {
        self.inner.get_range(key, range).await
    }

    async fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, Version)>, ObjectError> {
        self.hold(Step::Read).await;
        self.inner.get_versioned(key).await
    }

    async fn put_if(
        &self,
        key: &str,
        bytes: Vec<u8>,
        version: &Version,
    ) -> Result<bool, ObjectError> {
        self.hold(Step::Write).await;
        self.inner.put_if(key, bytes, version).await
    }

    async fn delete(&self, key: &str) -> Result<(), ObjectError> {
        self.inner.delete(key).await
    }

    async fn list_written(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Listed>, ObjectError> {
        self.inner.list_written(prefix, after, limit).await
    }
}

/// A call whose change `colour: green` is pending; a worker of the same service held at `step` while it
/// writes that change; the claim of that worker taken over, as once it has run out; the change
/// `colour: red` written by the next worker; then the held worker let go. The transcript must keep red.
async fn a_held_worker_leaves_the_newer_change(stack: Stack, step: Step) {
    let world = World::with(stack, |c| {
        c.worker_topics = "reindex,delete,score,rescore,transcribe,callback"
            .parse()
            .unwrap();
    })
    .await;
    world
        .create_folder(ORG, FOLDER, json!({"custom_meta": ["queue"]}))
        .await;
    let call = world.add_call(&transcript("invoice")).await;
    let path = format!("/metadata/{COMPANY}/{ORG}/{call}");
    let green = world
        .send("PATCH", &path, Some(json!({"colour": "green"})))
        .await;
    assert_eq!(green.status, 200, "{}", green.text);

    let state = &world.analytics.service.state;
    let held = HeldStore::new(state.objects.clone(), step);
    let slow = Arc::new(AnalyticsState::new(
        state.config.clone(),
        state.db.clone(),
        Ports {
            bus: state.bus.clone(),
            objects: held.clone(),
            search: state.search.clone(),
        },
    ));
    let worker = {
        let (slow, call) = (slow.clone(), call.clone());
        tokio::spawn(async move { analytics_core::jobs::metadata::write(&slow, &call).await })
    };
    held.reached.notified().await;

    // Its claim taken over (a claim at the end of time finds it run out) and let go at once.
    let taken = store::claim_calls(&state.db, &[&call], "taker", i64::MAX - 1, 0, true)
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "the held worker's claim is taken over");
    let red = world
        .send("PATCH", &path, Some(json!({"colour": "red"})))
        .await;
    assert_eq!(red.status, 200, "{}", red.text);
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(stored["metadata"]["colour"], "red");

    held.go.add_permits(1);
    let held_outcome = worker.await.unwrap();
    assert!(
        held_outcome.is_ok(),
        "the call is left to the writer that took it over: {held_outcome:?}"
    );
    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(
        stored["metadata"]["colour"], "red",
        "the held worker wrote its older change over the newer one"
    );
    assert_eq!(stored["last_modified"], red.body["last_modified"]);
    let pending = store::get_call_metadata(&state.db, &call)
        .await
        .unwrap()
        .unwrap()
        .pending;
    assert_eq!(pending, None, "nothing left to write");
}

async fn a_worker_held_before_its_read_writes_nothing_once_its_claim_is_taken(stack: Stack) {
    a_held_worker_leaves_the_newer_change(stack, Step::Read).await;
}

async fn a_worker_held_before_its_write_does_not_undo_the_newer_write(stack: Stack) {
    a_held_worker_leaves_the_newer_change(stack, Step::Write).await;
}

crate::stack_tests!(
    a_worker_held_before_its_read_writes_nothing_once_its_claim_is_taken,
    a_worker_held_before_its_write_does_not_undo_the_newer_write,
);
