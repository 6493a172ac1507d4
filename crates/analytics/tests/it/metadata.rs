//! `PATCH` and `DELETE /metadata`: every field reaches the stored transcript, configured fields also the
//! database (and the index, see `search`); `last_modified` moves on every request; reserved names are
//! refused with a text/html error that changes nothing; concurrent requests on one call lose nothing.

use std::time::Duration;

use analytics_core::jobs::metadata::Claim;
use analytics_core::worker::JobError;
use analytics_store as store;
use serde_json::{json, Value};

use crate::support::*;

fn path(call: &str) -> String {
    format!("/metadata/{COMPANY}/{ORG}/{call}")
}

async fn db_fields(world: &World, call: &str) -> Vec<(String, String)> {
    store::metadata(&world.analytics.service.state.db, call)
        .await
        .unwrap()
}

async fn patch_sets_fields_where_the_folder_says(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let before = world.stored_transcript(&call).await.unwrap();

    let a = world
        .send(
            "PATCH",
            &path(&call),
            Some(json!({"region": "south", "colour": "green", "score": 7})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["tId"], call.as_str());
    assert_eq!(a.body["region"], "south");
    assert_eq!(a.body["colour"], "green");
    assert_eq!(a.body["score"], "7");
    assert_eq!(a.body["queue"], "billing", "fields of the upload stay");
    assert_eq!(a.body["datetime"], "2026-11-20T10:15:00");
    assert_ne!(a.body["last_modified"], before["last_modified"]);

    let stored = world.written_transcript(&call).await;
    assert_eq!(
        stored["metadata"]["colour"], "green",
        "every field in the stored transcript"
    );
    assert_eq!(stored["last_modified"], a.body["last_modified"]);
    assert_eq!(
        stored["utterances"], before["utterances"],
        "the transcript itself is untouched"
    );
    assert_eq!(
        db_fields(&world, &call).await,
        vec![
            ("queue".into(), "billing".into()),
            ("region".into(), "south".into())
        ],
        "only configured fields in the database"
    );
    // The folder's configuration is not changed by the request.
    let folder = world
        .send("GET", &format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None)
        .await;
    assert_eq!(folder.body["custom_meta"], json!(["queue", "region"]));
}

async fn delete_removes_fields_everywhere_and_every_request_moves_last_modified(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let mut seen: Vec<Value> = Vec::new();
    for _ in 0..5 {
        let a = world
            .send("PATCH", &path(&call), Some(json!({"region": "west"})))
            .await;
        assert_eq!(a.status, 200);
        seen.push(a.body["last_modified"].clone());
    }
    let a = world
        .send(
            "DELETE",
            &path(&call),
            Some(json!(["region", "campaign", "absent"])),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    seen.push(a.body["last_modified"].clone());
    let mut sorted = seen.clone();
    sorted.sort_by_key(|v| v.as_str().unwrap().to_string());
    sorted.dedup();
    assert_eq!(sorted, seen, "strictly increasing: {seen:?}");

    assert!(a.body.get("region").is_none() && a.body.get("campaign").is_none());
    assert_eq!(a.body["queue"], "billing");
    let stored = world.written_transcript(&call).await;
    assert_eq!(stored["metadata"], json!({"queue": "billing"}));
    assert_eq!(stored["last_modified"], a.body["last_modified"]);
    assert_eq!(
        db_fields(&world, &call).await,
        vec![("queue".into(), "billing".into())]
    );
}

async fn reserved_and_malformed_requests_are_refused_as_text_html(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let before = world.stored_transcript(&call).await.unwrap();
    for (method, body, says) in [
        ("PATCH", json!({"tId": "x"}), "reserved"),
        (
            "PATCH",
            json!({"region": "a", "last_modified": "x"}),
            "reserved",
        ),
        ("PATCH", json!({"region": {"nested": true}}), "string"),
        ("PATCH", json!({"region": null}), "string"),
        ("PATCH", json!(["region"]), "invalid JSON body"),
        ("DELETE", json!(["datetime"]), "reserved"),
        ("DELETE", json!({"region": "a"}), "invalid JSON body"),
        (
            "PATCH",
            json!({"bad\u{0007}name": "a"}),
            "invalid metadata field name",
        ),
    ] {
        let a = world.send(method, &path(&call), Some(body.clone())).await;
        assert_eq!(a.status, 400, "{method} {body}: {}", a.text);
        assert!(
            a.content_type.starts_with("text/html"),
            "{}",
            a.content_type
        );
        assert!(a.text.contains(says), "{method} {body}: {}", a.text);
    }
    assert_eq!(
        world.written_transcript(&call).await,
        before,
        "nothing changed"
    );

    let unknown = uuid::Uuid::new_v4().to_string();
    let a = world
        .send("PATCH", &path(&unknown), Some(json!({"region": "a"})))
        .await;
    assert_eq!(a.status, 404);
    assert!(a.content_type.starts_with("text/html"));
    // The call exists, but not under this organization.
    let a = world
        .send(
            "PATCH",
            &format!("/metadata/{COMPANY}/elsewhere/{call}"),
            Some(json!({"region": "a"})),
        )
        .await;
    assert_eq!(a.status, 404);
}

/// Reserved names are matched in any case: `TID` and `Datetime` are refused like `tId` and
/// `datetime`, by metadata requests, uploads and `custom_meta`; a `DELETE` may still name them, so that a
/// field set before they were refused can be removed.
async fn reserved_names_are_refused_in_any_case(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let before = world.stored_transcript(&call).await.unwrap();
    for field in [
        "TID",
        "tid",
        "Datetime",
        "LAST_MODIFIED",
        "Agent_Id",
        "Metadata",
    ] {
        let a = world
            .send("PATCH", &path(&call), Some(json!({ field: "x" })))
            .await;
        assert_eq!(a.status, 400, "{field}: {}", a.text);
        assert!(a.content_type.starts_with("text/html"), "{field}");
        assert!(a.text.contains("reserved"), "{field}: {}", a.text);
        assert!(a.text.contains(field), "{field}: {}", a.text);
    }
    assert_eq!(
        world.written_transcript(&call).await,
        before,
        "nothing changed"
    );
    let a = world
        .upload_to(
            ORG,
            FOLDER,
            &transcript("x"),
            Some(json!({"Filename": "x"})),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("reserved"), "{}", a.text);
    let a = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}/{FOLDER}"),
            Some(json!({"custom_meta": ["queue", "Folder"]})),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("custom_meta[1]"), "{}", a.text);

    let a = world
        .send("DELETE", &path(&call), Some(json!(["TID", "Datetime"])))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let a = world
        .send("DELETE", &path(&call), Some(json!(["tId"])))
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
}

/// At most 1,000 fields a request, and 1,000 metadata fields a call: a request past either is refused
/// whole, and the call keeps what it had.
async fn a_call_keeps_at_most_a_thousand_metadata_fields(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let fields = |from: usize, to: usize| -> Value {
        Value::Object((from..to).map(|i| (format!("f{i}"), json!("v"))).collect())
    };
    let too_many = world
        .send("PATCH", &path(&call), Some(fields(0, 1001)))
        .await;
    assert_eq!(too_many.status, 400, "{}", too_many.text);
    assert!(too_many.text.contains("at most 1000"), "{}", too_many.text);
    let names: Vec<String> = (0..1001).map(|i| format!("f{i}")).collect();
    let too_many = world.send("DELETE", &path(&call), Some(json!(names))).await;
    assert_eq!(too_many.status, 400, "{}", too_many.text);

    let ok = world
        .send("PATCH", &path(&call), Some(fields(0, 990)))
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    // The answer holds the call's own fields beside its metadata fields (those of the upload too).
    let own = ["tId", "datetime", "last_modified", "filename", "agent_id"];
    let have = ok
        .body
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !own.contains(&k.as_str()))
        .count();
    assert!((990..1000).contains(&have), "{have}");
    // Twenty more, some of them new: 1,000 in all.
    let last = 990 + 1000 - have;
    let ok = world
        .send("PATCH", &path(&call), Some(fields(last - 20, last)))
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let past = world
        .send("PATCH", &path(&call), Some(fields(last - 5, last + 1)))
        .await;
    assert_eq!(past.status, 400, "{}", past.text);
    assert!(past.text.contains("1001 metadata fields"), "{}", past.text);
    // Changing fields it has is still fine, and what it had is kept.
    let ok = world
        .send("PATCH", &path(&call), Some(json!({"f0": "w"})))
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.body["f0"], "w");
    assert_eq!(ok.body[format!("f{}", last - 1)], "v");
    assert!(ok.body.get(format!("f{last}")).is_none());
}

async fn fifty_concurrent_patches_of_distinct_keys_all_land(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let requests = (0..50).map(|i| {
        let world = &world;
        let call = call.clone();
        async move {
            let key = if i == 0 {
                "region".to_string()
            } else {
                format!("key{i:02}")
            };
            let mut body = serde_json::Map::new();
            body.insert(key, json!(format!("v{i}")));
            let a = world
                .send("PATCH", &path(&call), Some(Value::Object(body)))
                .await;
            assert_eq!(a.status, 200, "{}", a.text);
        }
    });
    futures_util::future::join_all(requests).await;
    let stored = world.written_transcript(&call).await;
    let metadata = stored["metadata"].as_object().unwrap();
    for i in 1..50 {
        assert_eq!(
            metadata[&format!("key{i:02}")],
            format!("v{i}"),
            "key{i:02} kept"
        );
    }
    assert_eq!(metadata["region"], "v0");
    assert_eq!(
        metadata.len(),
        50 + 2,
        "the 50 keys and the upload's queue and campaign"
    );
    assert_eq!(
        db_fields(&world, &call).await,
        vec![
            ("queue".into(), "billing".into()),
            ("region".into(), "v0".into())
        ]
    );
}

/// A call added to the folder whose requests are committed in the same shard as `call`'s, or in
/// another one.
async fn call_in_shard(world: &World, call: &str, same: bool) -> String {
    let batches = &world.analytics.service.state.metadata_batches;
    loop {
        let next = world.add_call(&transcript("parcel")).await;
        if (batches.shard_of(&next) == batches.shard_of(call)) == same {
            return next;
        }
    }
}

/// A request holds its call's row and nothing else of the folder: a request on another call of the same
/// folder, committed in another shard, goes through while it is under way; one on the same call waits
/// for it.
async fn requests_on_other_calls_do_not_wait(stack: Stack) {
    if stack.backend() == Backend::Sqlite {
        // Every write transaction takes SQLite's database write lock: requests take turns there.
        return;
    }
    let world = World::with_folder(stack).await;
    let busy = world.add_call(&transcript("invoice")).await;
    let other = call_in_shard(&world, &busy, false).await;
    let state = &world.analytics.service.state;
    // The workers done with both calls first: a score or reindex batch locks its calls in id order, so
    // one that held `other` while waiting for `busy` would make the request on `other` wait as well.
    eventually(|| async {
        let facts = store::calls_facts(&state.db, &[&busy, &other])
            .await
            .unwrap();
        (facts.len() == 2).then_some(())
    })
    .await;
    world
        .search_until("q=invoice", |v| v["total"].as_u64() >= Some(1))
        .await;
    world
        .search_until("q=parcel", |v| {
            v["hits"]
                .as_array()
                .is_some_and(|hits| hits.iter().any(|hit| hit["tId"] == other.as_str()))
        })
        .await;

    // What a request under way on `busy` holds, and what a configuration change of the folder holds.
    let mut held = state.db.begin().await.unwrap();
    store::get_call(&mut held, &busy).await.unwrap().unwrap();
    store::get_folder(&mut held, COMPANY, ORG, FOLDER)
        .await
        .unwrap()
        .unwrap();

    let busy_path = path(&busy);
    let waiting = world.send("PATCH", &busy_path, Some(json!({"region": "south"})));
    tokio::pin!(waiting);
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(500), &mut waiting)
            .await
            .is_err(),
        "a request on the same call waits"
    );
    let a = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        world.send("PATCH", &path(&other), Some(json!({"region": "north"}))),
    )
    .await
    .expect("a request on another call does not wait");
    assert_eq!(a.status, 200, "{}", a.text);

    held.commit().await.unwrap();
    let a = waiting.await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        db_fields(&world, &busy).await,
        vec![
            ("queue".into(), "billing".into()),
            ("region".into(), "south".into())
        ]
    );
}

/// Requests that arrive while a batch is being committed are committed together in the next one, each
/// with its own answer: a request the batch refuses (a call that is not there, or not in the path's
/// organization) changes nothing and fails none of the others, and two requests on one call both land.
async fn requests_waiting_behind_a_batch_are_committed_together(stack: Stack) {
    let world = World::with_folder(stack).await;
    let state = &world.analytics.service.state;
    let batches = &state.metadata_batches;
    let busy = world.add_call(&transcript("invoice")).await;
    let a = call_in_shard(&world, &busy, true).await;
    let b = call_in_shard(&world, &busy, true).await;
    let missing = (0..)
        .map(|i| format!("missing-{i}"))
        .find(|id| batches.shard_of(id) == batches.shard_of(&busy))
        .unwrap();

    // Holds the batch of the first request: SQLite's write turn, or the call's row on PostgreSQL.
    let mut held = state.db.begin().await.unwrap();
    store::get_call(&mut held, &busy).await.unwrap().unwrap();
    let before = batches.taken();
    let busy_path = path(&busy);
    let first = world.send("PATCH", &busy_path, Some(json!({"region": "first"})));
    let rest = async {
        // Sent once the first request's batch is under way, so they wait for the next.
        eventually(|| async { (batches.taken() == before + 1).then_some(()) }).await;
        let (path_a, path_b, path_missing) = (path(&a), path(&b), path(&missing));
        let elsewhere = format!("/metadata/{COMPANY}/elsewhere/{a}");
        let others = futures_util::future::join_all([
            world.send("PATCH", &path_a, Some(json!({"region": "east"}))),
            world.send("PATCH", &path_a, Some(json!({"colour": "blue"}))),
            world.send("DELETE", &path_b, Some(json!(["queue"]))),
            world.send("PATCH", &path_missing, Some(json!({"region": "x"}))),
            world.send("PATCH", &elsewhere, Some(json!({"region": "x"}))),
        ]);
        let release = async {
            eventually(|| async { (batches.waiting() == 5).then_some(()) }).await;
            held.commit().await.unwrap();
        };
        futures_util::join!(others, release).0
    };
    let (first, others) = futures_util::join!(first, rest);
    assert_eq!(
        batches.taken(),
        before + 2,
        "the five waiting requests made one batch"
    );

    assert_eq!(first.status, 200, "{}", first.text);
    let [east, blue, unqueued, not_there, elsewhere] = others.try_into().unwrap();
    assert_eq!(east.status, 200, "{}", east.text);
    assert_eq!(blue.status, 200, "{}", blue.text);
    assert_ne!(east.body["last_modified"], blue.body["last_modified"]);
    let last = if east.body["last_modified"].as_str() > blue.body["last_modified"].as_str() {
        &east
    } else {
        &blue
    };
    assert_eq!(
        last.body["region"], "east",
        "the later request starts from the earlier"
    );
    assert_eq!(last.body["colour"], "blue");
    assert_eq!(unqueued.status, 200, "{}", unqueued.text);
    assert!(unqueued.body.get("queue").is_none());
    assert_eq!(not_there.status, 404);
    assert_eq!(not_there.text, format!("Transcript not found: {missing}"));
    assert_eq!(elsewhere.status, 404);
    assert_eq!(elsewhere.text, format!("Transcript not found: {a}"));

    assert_eq!(
        db_fields(&world, &a).await,
        vec![
            ("queue".into(), "billing".into()),
            ("region".into(), "east".into())
        ]
    );
    assert_eq!(db_fields(&world, &b).await, vec![]);
    let stored = world.written_transcript(&a).await;
    assert_eq!(stored["metadata"]["colour"], "blue");
    assert_eq!(stored["last_modified"], last.body["last_modified"]);
}

/// A world whose workers take every topic but `analytics.metadata`: metadata changes stay pending on
/// the call's row until the test writes them with `jobs::metadata::write`.
async fn world_without_metadata_worker(stack: Stack) -> World {
    let world = World::with(stack, |c| {
        c.worker_topics = "reindex,delete,score,rescore,transcribe,callback"
            .parse()
            .unwrap();
    })
    .await;
    world
        .create_folder(ORG, FOLDER, json!({"custom_meta": ["queue", "region"]}))
        .await;
    world
}

/// A world without the metadata worker, a call, and the answer to its change `colour: green`, pending
/// for the stored transcript.
async fn a_call_with_a_pending_change(stack: Stack) -> (World, String, Answer) {
    let world = world_without_metadata_worker(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let a = world
        .send("PATCH", &path(&call), Some(json!({"colour": "green"})))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    (world, call, a)
}

/// A request is answered once its change is committed; the stored transcript follows through the
/// metadata worker. Meanwhile the pending change is the call's metadata: the next request starts from
/// it, and one write of the worker then carries both.
async fn changes_pending_for_the_transcript_are_where_the_next_request_starts(stack: Stack) {
    let world = world_without_metadata_worker(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let before = world.stored_transcript(&call).await.unwrap();

    let a = world
        .send("PATCH", &path(&call), Some(json!({"colour": "green"})))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let b = world
        .send("DELETE", &path(&call), Some(json!(["campaign"])))
        .await;
    assert_eq!(b.status, 200, "{}", b.text);
    assert_eq!(b.body["colour"], "green", "the pending change is kept");
    assert!(b.body.get("campaign").is_none());
    assert_eq!(
        world.stored_transcript(&call).await.unwrap(),
        before,
        "no worker has written the transcript yet"
    );

    let state = &world.analytics.service.state;
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(
        stored["metadata"],
        json!({"queue": "billing", "colour": "green"})
    );
    assert_eq!(stored["last_modified"], b.body["last_modified"]);
    assert_eq!(stored["utterances"], before["utterances"]);
    let pending = store::get_call_metadata(&state.db, &call)
        .await
        .unwrap()
        .unwrap()
        .pending;
    assert_eq!(pending, None, "written: nothing pending");
    // Written once, a second message of the same change changes nothing.
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    assert_eq!(world.stored_transcript(&call).await.unwrap(), stored);
}

/// A change still pending when its folder is deleted is never written: the deletion removes the call's
/// row and objects, and the worker that comes later finds nothing to write to.
async fn a_pending_change_of_a_deleted_folder_writes_nothing(stack: Stack) {
    let (world, call, _) = a_call_with_a_pending_change(stack).await;
    let folder = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    assert_eq!(world.send("DELETE", &folder, None).await.status, 200);
    eventually(|| async { (world.send("GET", &folder, None).await.status == 404).then_some(()) })
        .await;

    let state = &world.analytics.service.state;
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    assert!(
        world.stored_transcript(&call).await.is_none(),
        "no transcript comes back"
    );
}

/// The messages of `topic` published since the last look: `expected` of them, then none within a
/// second. Each is acknowledged: the test does the workers' part itself.
async fn messages_of(stand_in: &StandIn, topic: &'static str, expected: usize) {
    let bus = stand_in.bus();
    for i in 0..expected {
        let delivery = bus
            .receive(topic, Duration::from_secs(10))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("message {} of {expected} on {topic}", i + 1));
        bus.ack(delivery).await.unwrap();
    }
    let extra = bus.receive(topic, Duration::from_secs(1)).await.unwrap();
    assert!(extra.is_none(), "more than {expected} messages on {topic}");
}

/// A change announces itself only where nothing is on its way: the first change of a call sends the
/// metadata worker's message and, for a configured field, a reindex message; changes after it send
/// nothing until the workers have taken theirs. A change pending for over a minute is announced again,
/// in case its message was lost.
async fn a_stream_of_changes_to_a_call_sends_one_message_of_each_kind(stack: Stack) {
    let world = World::with(stack, |c| {
        c.worker_topics = "delete,score,rescore,transcribe,callback".parse().unwrap();
    })
    .await;
    world
        .create_folder(ORG, FOLDER, json!({"custom_meta": ["queue", "region"]}))
        .await;
    let call = world.add_call(&transcript("invoice")).await;
    let state = &world.analytics.service.state;
    let stand_in = world.stand_in().await;
    let (metadata, reindex) = (messages::topics::METADATA, messages::topics::REINDEX);
    messages_of(&stand_in, reindex, 1).await; // the upload's
    let patch = |body: Value| {
        let world = &world;
        let path = path(&call);
        async move {
            let a = world.send("PATCH", &path, Some(body)).await;
            assert_eq!(a.status, 200, "{}", a.text);
        }
    };

    patch(json!({"region": "a"})).await;
    patch(json!({"region": "b", "colour": "x"})).await;
    patch(json!({"colour": "y"})).await;
    messages_of(&stand_in, metadata, 1).await;
    messages_of(&stand_in, reindex, 1).await;

    // The workers take their messages: the metadata worker writes what is pending, the reindex worker
    // clears the call's mark before it reads the call.
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    store::clear_reindex_due(&state.db, &[call.as_str()])
        .await
        .unwrap();
    patch(json!({"region": "c"})).await;
    messages_of(&stand_in, metadata, 1).await;
    messages_of(&stand_in, reindex, 1).await;
    patch(json!({"colour": "z"})).await;
    messages_of(&stand_in, metadata, 0).await;
    messages_of(&stand_in, reindex, 0).await;

    let pending = store::get_call_metadata(&state.db, &call)
        .await
        .unwrap()
        .unwrap()
        .pending;
    let long_ago = "2026-01-01T00:00:00.000Z";
    store::set_call_metadata(&state.db, &call, long_ago, pending.as_deref())
        .await
        .unwrap();
    patch(json!({"colour": "w"})).await;
    messages_of(&stand_in, metadata, 1).await;
    messages_of(&stand_in, reindex, 0).await;
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(
        stored["metadata"],
        json!({"queue": "billing", "campaign": "autumn", "region": "c", "colour": "w"})
    );
}

/// A change committed while the worker writes the one before sends no message (its call has one
/// pending): the worker finds it when it clears what it wrote, leaves it pending and announces it, and
/// the next write carries it.
async fn a_change_committed_while_the_worker_writes_is_announced_and_written_next(stack: Stack) {
    let (world, call, _) = a_call_with_a_pending_change(stack).await;
    let stand_in = world.stand_in().await;
    messages_of(&stand_in, messages::topics::METADATA, 1).await;

    let state = &world.analytics.service.state;
    let claim = Claim::take(state, &[&call]).await.unwrap();
    let b = world
        .send("PATCH", &path(&call), Some(json!({"colour": "blue"})))
        .await;
    assert_eq!(
        b.status, 200,
        "the worker's claim holds up no request: {}",
        b.text
    );
    messages_of(&stand_in, messages::topics::METADATA, 0).await;
    let outcomes = claim.write(state).await;
    assert!(outcomes.values().all(Result::is_ok), "{outcomes:?}");

    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(
        stored["metadata"]["colour"], "green",
        "the change it claimed"
    );
    let pending = store::get_call_metadata(&state.db, &call)
        .await
        .unwrap()
        .unwrap()
        .pending;
    assert!(
        pending.is_some_and(|p| p.contains("blue")),
        "the later change is still pending"
    );
    messages_of(&stand_in, messages::topics::METADATA, 1).await;

    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(stored["metadata"]["colour"], "blue");
    assert_eq!(stored["last_modified"], b.body["last_modified"]);
    let pending = store::get_call_metadata(&state.db, &call)
        .await
        .unwrap()
        .unwrap()
        .pending;
    assert_eq!(pending, None, "written: nothing pending");
}

/// A call one worker is writing is not written by another at the same time (a redelivered message, a
/// change announced again): the other's message is retried, and nothing is left to write once the first
/// is done.
async fn a_call_being_written_is_left_to_its_writer(stack: Stack) {
    let (world, call, _) = a_call_with_a_pending_change(stack).await;
    let state = &world.analytics.service.state;

    let first = Claim::take(state, &[&call]).await.unwrap();
    let second = analytics_core::jobs::metadata::write(state, &call).await;
    assert!(
        matches!(&second, Err(JobError::Retry(reason)) if reason.contains("another writer")),
        "{second:?}"
    );
    assert!(first.write(state).await.values().all(Result::is_ok));
    assert_eq!(
        world.stored_transcript(&call).await.unwrap()["metadata"]["colour"],
        "green"
    );
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
}

/// A deletion waits for a transcript write under way on its calls before it removes their objects, and
/// no write starts after it has begun: nothing of the folder is left in the object store.
async fn a_deletion_waits_for_a_write_under_way(stack: Stack) {
    let (world, call, _) = a_call_with_a_pending_change(stack).await;
    let state = &world.analytics.service.state;
    let claim = Claim::take(state, &[&call]).await.unwrap();

    let folder = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    assert_eq!(world.send("DELETE", &folder, None).await.status, 200);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        world.stored_transcript(&call).await.is_some(),
        "the deletion waits for the write"
    );
    assert_ne!(world.send("GET", &folder, None).await.status, 404);

    assert!(claim.write(state).await.values().all(Result::is_ok));
    eventually(|| async { (world.send("GET", &folder, None).await.status == 404).then_some(()) })
        .await;
    assert!(
        world.stored_transcript(&call).await.is_none(),
        "the transcript written before the deletion went with it"
    );
    // A message of the change arriving now writes nothing.
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    assert!(world.stored_transcript(&call).await.is_none());
}

/// A claim left by a worker that stopped half way holds its calls only until it runs out; then the next
/// message of the call writes it.
async fn a_claim_left_by_a_stopped_worker_runs_out(stack: Stack) {
    let (world, call, _) = a_call_with_a_pending_change(stack).await;
    let state = &world.analytics.service.state;
    let now = chrono::Utc::now().timestamp_millis();
    let claimed = store::claim_calls(&state.db, &[&call], "stopped", now, now + 60_000, true)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert!(analytics_core::jobs::metadata::write(state, &call)
        .await
        .is_err());

    // The same claim, run out.
    store::claim_calls(&state.db, &[&call], "stopped", now, now - 1, true)
        .await
        .unwrap();
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    assert_eq!(
        world.stored_transcript(&call).await.unwrap()["metadata"]["colour"],
        "green"
    );
}

/// Once a call has been changed, its row keeps its whole metadata, written into the transcript or not:
/// the next request starts from the row and reads no stored transcript.
async fn a_changed_call_is_changed_again_without_reading_its_transcript(stack: Stack) {
    let (world, call, a) = a_call_with_a_pending_change(stack).await;
    let state = &world.analytics.service.state;
    analytics_core::jobs::metadata::write(state, &call)
        .await
        .unwrap();
    let key = format!("{COMPANY}/{ORG}/{FOLDER}/{call}/transcript.json");
    state.objects.delete(&key).await.unwrap();

    let b = world
        .send("PATCH", &path(&call), Some(json!({"size": "large"})))
        .await;
    assert_eq!(b.status, 200, "{}", b.text);
    assert_eq!(b.body["colour"], "green", "{}", b.text);
    assert_eq!(b.body["size"], "large");
    assert_eq!(b.body["campaign"], a.body["campaign"], "{}", a.text);
}

crate::stack_tests!(
    reserved_names_are_refused_in_any_case,
    a_call_keeps_at_most_a_thousand_metadata_fields,
    patch_sets_fields_where_the_folder_says,
    delete_removes_fields_everywhere_and_every_request_moves_last_modified,
    reserved_and_malformed_requests_are_refused_as_text_html,
    fifty_concurrent_patches_of_distinct_keys_all_land,
    requests_on_other_calls_do_not_wait,
    requests_waiting_behind_a_batch_are_committed_together,
    changes_pending_for_the_transcript_are_where_the_next_request_starts,
    a_pending_change_of_a_deleted_folder_writes_nothing,
    a_stream_of_changes_to_a_call_sends_one_message_of_each_kind,
    a_change_committed_while_the_worker_writes_is_announced_and_written_next,
    a_call_being_written_is_left_to_its_writer,
    a_deletion_waits_for_a_write_under_way,
    a_claim_left_by_a_stopped_worker_runs_out,
    a_changed_call_is_changed_again_without_reading_its_transcript,
);
