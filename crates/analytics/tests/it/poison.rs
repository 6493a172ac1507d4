//! One company's odd input fails only its own work: what the search index would refuse is refused at
//! upload, naming the field; a document the index refuses all the same (a call stored before that rule)
//! fails only its own messages, which become dead letters that an operator sees in `/metrics` and puts
//! back in the queue once the call is mended, while the other calls of its batch are indexed; and a call
//! whose scores the database refuses is retried alone while the rest of its batch is scored.

use std::time::Duration;

use analytics_core::jobs;
use analytics_core::topics::Topic;
use common::db::Database;
use serde_json::{json, Value};

use crate::support::*;

/// An upload into `company`'s folder `main/calls` with its token.
async fn upload(world: &World, company: &str, token: &str, transcript: &Value) -> Answer {
    world
        .upload_into(token, company, "main", "calls", transcript)
        .await
}

/// `company`'s organization `main` and folder `calls`, with the metadata field `queue` configured.
async fn folder_of(world: &World, company: &str, token: &str) {
    for (path, body) in [
        (format!("/config/{company}"), json!({})),
        (
            format!("/config/{company}/main"),
            json!({"timezone": "UTC"}),
        ),
        (
            format!("/config/{company}/main/calls"),
            json!({"custom_meta": ["queue"]}),
        ),
    ] {
        let a = world.send_as(Some(token), "PUT", &path, Some(body)).await;
        assert_eq!(a.status, 200, "{path}: {}", a.text);
    }
}

async fn search(world: &World, company: &str, token: &str, q: &str) -> Value {
    let path = format!("/search/{company}/main?q={q}");
    let a = world.send_as(Some(token), "GET", &path, None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body
}

fn with(mut transcript: Value, field: &str, value: Value) -> Value {
    transcript[field] = value;
    transcript
}

async fn what_the_index_would_refuse_is_refused_at_upload(stack: Stack) {
    let world = World::new(stack).await;
    let acme = world.token.clone();
    let evil = world.other_company("evil").await;
    folder_of(&world, COMPANY, &acme).await;
    folder_of(&world, "evil", &evil).await;

    for datetime in [
        "-0001-01-01T00:00:00",
        "1899-12-31T23:59:59",
        "0500-06-01T12:00:00",
        "+10000-01-01T00:00:00",
    ] {
        let bad = with(transcript("poison"), "datetime", json!(datetime));
        let a = upload(&world, "evil", &evil, &bad).await;
        assert_eq!(a.status, 400, "{datetime}: {}", a.text);
        assert!(a.text.contains("datetime"), "{datetime}: {}", a.text);
    }
    let a = upload(
        &world,
        "evil",
        &evil,
        &with(
            transcript("poison"),
            "datetime",
            json!("9999-12-31T23:00:00Z"),
        ),
    )
    .await;
    assert_eq!(a.status, 200, "the last year allowed: {}", a.text);
    for field in ["a..b", "queue.", ".queue"] {
        let bad = with(transcript("poison"), "metadata", json!({ field: "x" }));
        let a = upload(&world, "evil", &evil, &bad).await;
        assert_eq!(a.status, 400, "{field}: {}", a.text);
        assert!(a.text.contains("field name"), "{field}: {}", a.text);
    }
    // One rule for the metadata of an upload and of a PATCH.
    let many: serde_json::Map<String, Value> =
        (0..1001).map(|i| (format!("f{i}"), json!("x"))).collect();
    let a = upload(
        &world,
        "evil",
        &evil,
        &with(transcript("poison"), "metadata", Value::Object(many)),
    )
    .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("at most 1000"), "{}", a.text);

    let a = upload(&world, COMPANY, &acme, &transcript("invoice")).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let call = a.body["tId"].as_str().unwrap().to_string();
    let found = eventually(|| async {
        let hits = search(&world, COMPANY, &acme, "invoice").await;
        (hits["total"] == 1).then_some(hits)
    })
    .await;
    assert_eq!(found["hits"][0]["tId"], call.as_str(), "{found}");
}

/// Sets a stored call's time as a call stored before the upload rule could have it.
async fn store_datetime(db: &Database, call: &str, datetime: &str) {
    const SET: &str = "UPDATE analytics_calls SET datetime = $1 WHERE id = $2";
    match db {
        Database::Postgres(pool, _) => sqlx::query(SET)
            .bind(datetime)
            .bind(call)
            .execute(pool)
            .await
            .map(drop),
        Database::Sqlite(pool, _, _) => sqlx::query(SET)
            .bind(datetime)
            .bind(call)
            .execute(pool)
            .await
            .map(drop),
    }
    .unwrap();
}

/// The messages of `topic` published so far, taken from the bus as one batch.
async fn batch_of(world: &World, topic: &str, at_least: usize) -> Vec<common::bus::Delivery> {
    let bus = &world.analytics.service.state.bus;
    let mut batch = Vec::new();
    let deadline = tokio::time::Instant::now() + EVENTUALLY;
    while batch.len() < at_least && tokio::time::Instant::now() < deadline {
        let more = bus
            .receive_many(topic, Duration::from_secs(1), 100)
            .await
            .unwrap();
        batch.extend(more);
    }
    assert!(
        batch.len() >= at_least,
        "{} messages of {topic}",
        batch.len()
    );
    batch
}

async fn reindex_batch(world: &World, at_least: usize) -> Vec<common::bus::Delivery> {
    batch_of(world, messages::topics::REINDEX, at_least).await
}

/// Makes the database refuse to store the figures of `call`, as a constraint would refuse a row.
async fn refuse_figures_of(db: &Database, call: &str) {
    match db {
        Database::Postgres(pool, _) => {
            let function = format!(
                "CREATE FUNCTION refuse_figures() RETURNS trigger AS $$ BEGIN \
                 IF NEW.call_id = '{call}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; \
                 END $$ LANGUAGE plpgsql"
            );
            sqlx::query(&function).execute(pool).await.unwrap();
            sqlx::query(
                "CREATE TRIGGER refuse_figures BEFORE INSERT ON analytics_call_facts \
                 FOR EACH ROW EXECUTE FUNCTION refuse_figures()",
            )
            .execute(pool)
            .await
            .unwrap();
        }
        Database::Sqlite(pool, _, _) => {
            let trigger = format!(
                "CREATE TRIGGER refuse_figures BEFORE INSERT ON analytics_call_facts \
                 WHEN NEW.call_id = '{call}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
            );
            sqlx::query(&trigger).execute(pool).await.unwrap();
        }
    }
}

/// Two companies, each with a call: evil's `odd` ("poison") and acme's `fine` ("invoice"), uploaded
/// while the workers of every topic but `left` run, so that the test takes `left`'s messages itself.
struct TwoCalls {
    world: World,
    acme: String,
    evil: String,
    odd: String,
    fine: String,
}

async fn two_calls(stack: Stack, left: &str) -> TwoCalls {
    let topics: Vec<&str> = Topic::ALL
        .map(Topic::short)
        .into_iter()
        .filter(|short| *short != left)
        .collect();
    let world = World::with(stack, |c| {
        c.worker_topics = topics.join(",").parse().unwrap()
    })
    .await;
    let acme = world.token.clone();
    let evil = world.other_company("evil").await;
    folder_of(&world, COMPANY, &acme).await;
    folder_of(&world, "evil", &evil).await;
    let a = upload(&world, "evil", &evil, &transcript("poison")).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let odd = a.body["tId"].as_str().unwrap().to_string();
    let a = upload(&world, COMPANY, &acme, &transcript("invoice")).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let fine = a.body["tId"].as_str().unwrap().to_string();
    TwoCalls {
        world,
        acme,
        evil,
        odd,
        fine,
    }
}

async fn a_call_the_scores_cannot_take_fails_only_its_own_messages(stack: Stack) {
    let TwoCalls {
        world, odd, fine, ..
    } = two_calls(stack, "score").await;
    let state = world.analytics.service.state.clone().into_inner();
    refuse_figures_of(&state.db, &odd).await;

    let batch = batch_of(&world, messages::topics::SCORE, 2).await;
    jobs::score::process(state.clone(), batch).await;
    let scored: Vec<String> = analytics_store::calls_facts(&state.db, &[&fine, &odd])
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.call_id)
        .collect();
    assert_eq!(scored, [fine], "acme's call is scored, evil's alone is not");
    // Evil's message is retried, not lost.
    let again = batch_of(&world, messages::topics::SCORE, 1).await;
    assert_eq!(again.len(), 1);
    assert!(again[0].attempt >= 2, "attempt {}", again[0].attempt);
}

async fn a_document_the_index_refuses_fails_only_its_own_call(stack: Stack) {
    let TwoCalls {
        world,
        acme,
        evil,
        odd,
        fine,
    } = two_calls(stack, "reindex").await;
    let state = world.analytics.service.state.clone().into_inner();
    store_datetime(&state.db, &odd, "-0001-01-01T00:00:00").await;

    jobs::reindex::process(state.clone(), reindex_batch(&world, 2).await).await;
    let hits = search(&world, COMPANY, &acme, "invoice").await;
    assert_eq!(hits["total"], 1, "acme's call is searchable: {hits}");
    assert_eq!(hits["hits"][0]["tId"], fine.as_str());
    assert_eq!(search(&world, "evil", &evil, "poison").await["total"], 0);

    let topic = messages::topics::REINDEX;
    let dead = jobs::dead::list(&state, topic, 10).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(dead[0].reason.contains("datetime"), "{}", dead[0].reason);
    let metrics = reqwest::get(world.url("/metrics", None))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("bus_dead_letters{") && l.contains(topic) && l.ends_with(" 1")),
        "{metrics}"
    );

    // Mended, and replayed by the operator: the call is indexed.
    store_datetime(&state.db, &odd, "2026-11-20T10:15:00").await;
    assert_eq!(jobs::dead::replay(&state, topic, 100).await.unwrap(), 1);
    assert_eq!(state.bus.dead_letter_count(topic).await.unwrap(), 0);
    jobs::reindex::process(state.clone(), reindex_batch(&world, 1).await).await;
    let hits = search(&world, "evil", &evil, "poison").await;
    assert_eq!(hits["hits"][0]["tId"], odd.as_str(), "{hits}");
}

crate::stack_tests!(
    what_the_index_would_refuse_is_refused_at_upload,
    a_document_the_index_refuses_fails_only_its_own_call,
    a_call_the_scores_cannot_take_fails_only_its_own_messages,
);
