//! Scoring calls and keeping the daily rollups (docs/scoring.md): calls are scored by their folder's
//! applications once they land, rescored when an application or the folder's `apps` change, and every
//! scored call is counted in the rollups exactly once, whatever arrives late, twice, or dies midway.
//! Expected values are worked out by hand from the application below.

use std::collections::BTreeMap;
use std::time::Duration;

use analytics_core::jobs::rescore;
use analytics_core::jobs::score::{score_row, write, FolderApps};
use analytics_store::{self as store, rollups::RollupTotals};
use serde_json::{json, Value};

use crate::support::*;

/// Greeting: one include phrase. Billing: Refund (two include phrases) and Invoice (an include phrase
/// and an exclude phrase).
fn support_app(with_exclude: bool) -> Value {
    let mut invoice = vec![json!("invoice")];
    if with_exclude {
        invoice.push(json!("-invoice & paid"));
    }
    json!({"categories": {
        "Greeting": {"phrases": ["for calling"]},
        "Billing": {"subcategories": {
            "Refund": {"phrases": ["refund", "money back"]},
            "Invoice": {"phrases": invoice}}}}})
}

fn call(agent: &str, turns: &[(&str, &str)]) -> Value {
    let utterances: Vec<Value> = turns
        .iter()
        .enumerate()
        .map(|(i, (speaker, text))| {
            json!({"speaker": speaker, "start": i as f64 * 10.0, "end": i as f64 * 10.0 + 5.0, "text": text})
        })
        .collect();
    json!({"datetime": "2026-11-20T10:15:00", "agent_id": agent, "audio_seconds": 60.0,
           "utterances": utterances})
}

/// Greeting 1; Refund 2 (two phrases in one turn); Invoice 0 (its exclude phrase cancels the include in
/// the same turn). 16 words.
fn call_a() -> Value {
    call(
        "agent-7",
        &[
            ("agent", "thank you for calling"),
            ("client", "I want a refund or my money back"),
            ("client", "the invoice is paid"),
        ],
    )
}

/// Invoice 1, nothing else. 5 words.
fn call_b() -> Value {
    call(
        "agent-8",
        &[("agent", "hello"), ("client", "where is my invoice")],
    )
}

/// (app, category) → (calls, hits, score) over calls A and B.
fn expected(with_exclude: bool) -> RollupTotals {
    let rows: &[(&str, (i64, i64, i64))] = if with_exclude {
        &[
            ("", (2, 2, 4)),
            ("Billing", (2, 2, 3)),
            ("Billing.Invoice", (2, 1, 1)),
            ("Billing.Refund", (2, 1, 2)),
            ("Greeting", (2, 1, 1)),
        ]
    } else {
        // Without the exclude phrase call A's invoice turn counts: Invoice 1 more, Billing and the
        // application too.
        &[
            ("", (2, 2, 5)),
            ("Billing", (2, 2, 4)),
            ("Billing.Invoice", (2, 2, 2)),
            ("Billing.Refund", (2, 1, 2)),
            ("Greeting", (2, 1, 1)),
        ]
    };
    RollupTotals {
        calls: 2,
        words: 21,
        categories: rows
            .iter()
            .map(|(c, v)| (("support".to_string(), c.to_string()), *v))
            .collect::<BTreeMap<_, _>>(),
    }
}

async fn put_app(world: &World, definition: Value) -> String {
    let a = world
        .send("PUT", &format!("/apps/{COMPANY}/support"), Some(definition))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body["revision"].as_str().expect("revision").to_string()
}

/// Waits until the rollups hold `want` and agree with the per-call rows.
async fn rollups_become(world: &World, want: &RollupTotals) {
    let db = &world.analytics.service.state.db;
    eventually(|| async {
        let (rollups, calls) = store::rollup_totals(db, COMPANY).await.unwrap();
        (rollups == *want && calls == *want).then_some(())
    })
    .await;
}

async fn scoring_of(world: &World, call: &str) -> Option<String> {
    let db = &world.analytics.service.state.db;
    store::call_facts(db, call)
        .await
        .unwrap()
        .map(|f| f.scoring)
}

async fn calls_are_scored_by_their_folders_applications(stack: Stack) {
    let world = World::new(stack).await;
    world
        .create_folder(ORG, FOLDER, json!({"apps": ["support", "missing"]}))
        .await;
    let revision = put_app(&world, support_app(true)).await;
    let a = world.add_call(&call_a()).await;
    let b = world.add_call(&call_b()).await;
    rollups_become(&world, &expected(true)).await;

    // The application that does not exist is left out of the fingerprint.
    assert_eq!(
        scoring_of(&world, &a).await.unwrap(),
        format!("support@{revision}")
    );
    let db = &world.analytics.service.state.db;
    let scores: Vec<(String, i64, i64, f64)> = store::call_scores(db, &a)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.category, r.score, r.hit, r.coverage))
        .collect();
    assert_eq!(
        scores,
        vec![
            // The application: Greeting and Billing both hit.
            ("".to_string(), 3, 1, 1.0),
            // Billing: Refund hit, Invoice did not.
            ("Billing".to_string(), 2, 1, 0.5),
            ("Billing.Invoice".to_string(), 0, 0, 0.0),
            ("Billing.Refund".to_string(), 2, 1, 1.0),
            ("Greeting".to_string(), 1, 1, 1.0),
        ]
    );
    let facts = store::call_facts(db, &b).await.unwrap().unwrap();
    assert_eq!(
        (facts.day.as_str(), facts.agent_id.as_str(), facts.words),
        ("2026-11-20", "agent-8", 5)
    );

    // The statistics read what the worker counted. Each call lasts 60 s; A's three 5 s turns leave 45 s
    // of silence, B's two 50 s. Categories no call of the agent hit are left out.
    let stats = |hits: i64, hitmiss: &str, coverage: &str, silence: &str| {
        json!({"ncalls": hits, "hitmiss": hitmiss, "coverage": coverage, "duration": "0:01:00",
               "silence": silence})
    };
    let a = world
        .send(
            "GET",
            &format!("/appstats/{COMPANY}/{ORG}/support?daterange=20261120-20261120"),
            None,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body,
        json!([{"date": "20261120", "agents": 2,
            "agent-7": {"calls": 1,
                "overall": stats(1, "1.0000", "1.0000", "0:00:45"),
                "Greeting": stats(1, "1.0000", "1.0000", "0:00:45"),
                "Billing": stats(1, "1.0000", "0.5000", "0:00:45"),
                "Billing.Refund": stats(1, "1.0000", "1.0000", "0:00:45")},
            "agent-8": {"calls": 1,
                "overall": stats(1, "1.0000", "0.5000", "0:00:50"),
                "Billing": stats(1, "1.0000", "0.5000", "0:00:50"),
                "Billing.Invoice": stats(1, "1.0000", "1.0000", "0:00:50")}}])
    );
    let s = world
        .send(
            "GET",
            &format!("/stats/{COMPANY}/{ORG}/{FOLDER}?daterange=20261120-20261120"),
            None,
        )
        .await;
    assert_eq!(s.status, 200, "{}", s.text);
    let day = &s.body[0];
    assert_eq!(
        (
            &day["date"],
            &day["calls"],
            &day["avgduration"],
            &day["avgwords"]
        ),
        (
            &json!("20261120"),
            &json!(2),
            &json!("0:01:00"),
            &json!(10.5)
        )
    );
    assert_eq!(day["agent"]["avgcalls"], "1.0000");
    assert_eq!(day["agent"]["talk"]["avg"], "0:00:05");
}

async fn application_and_folder_changes_rescore_every_call_once(stack: Stack) {
    let world = World::new(stack).await;
    world.create_folder(ORG, FOLDER, json!({})).await;
    put_app(&world, support_app(true)).await;
    let a = world.add_call(&call_a()).await;
    world.add_call(&call_b()).await;
    // Without applications the calls are counted with their figures and no scores.
    rollups_become(
        &world,
        &RollupTotals {
            calls: 2,
            words: 21,
            categories: BTreeMap::new(),
        },
    )
    .await;
    assert_eq!(scoring_of(&world, &a).await.unwrap(), "");

    let a2 = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}/{FOLDER}"),
            Some(json!({"apps": ["support"]})),
        )
        .await;
    assert_eq!(a2.status, 200, "{}", a2.text);
    rollups_become(&world, &expected(true)).await;

    let revision = put_app(&world, support_app(false)).await;
    rollups_become(&world, &expected(false)).await;
    assert_eq!(
        scoring_of(&world, &a).await.unwrap(),
        format!("support@{revision}")
    );

    let gone = world
        .send("DELETE", &format!("/apps/{COMPANY}/support"), None)
        .await;
    assert_eq!(gone.status, 200, "{}", gone.text);
    rollups_become(
        &world,
        &RollupTotals {
            calls: 2,
            words: 21,
            categories: BTreeMap::new(),
        },
    )
    .await;

    // Deleting the folder takes its rollups with it.
    let deleted = world
        .send("DELETE", &format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None)
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.text);
    rollups_become(&world, &RollupTotals::default()).await;
}

async fn late_and_repeated_scores_change_nothing_in(mut world: World) {
    world
        .create_folder(ORG, FOLDER, json!({"apps": ["support"]}))
        .await;
    put_app(&world, support_app(true)).await;
    world
        .analytics
        .workers
        .take()
        .expect("workers")
        .stop()
        .await;
    let a = world.add_call(&call_a()).await;
    world.add_call(&call_b()).await;

    let state = &world.analytics.service.state;
    let scored_with_first = || async {
        let apps = FolderApps::load(state, COMPANY, ORG, FOLDER)
            .await
            .unwrap()
            .unwrap();
        let row = store::get_call(&state.db, &a).await.unwrap().unwrap();
        score_row(state, row, &apps).await.unwrap()
    };
    let first = scored_with_first().await.expect("not scored yet");
    let again = scored_with_first().await.expect("still not scored");
    write(state, &[first]).await.unwrap();
    // The same call scored twice before either was written: the second write finds it up to date.
    write(state, &[again]).await.unwrap();
    let (rollups, _) = store::rollup_totals(&state.db, COMPANY).await.unwrap();
    assert_eq!((rollups.calls, rollups.words), (1, 16));
    assert_eq!(
        rollups.categories[&("support".to_string(), "".to_string())],
        (1, 1, 3)
    );

    // Scored before the application changed, written after: left for the rescore job.
    let stale = {
        let apps = FolderApps::load(state, COMPANY, ORG, FOLDER)
            .await
            .unwrap()
            .unwrap();
        // A fingerprint of the first revision, on a call not yet written.
        let b = store::calls_after(&state.db, COMPANY, ORG, FOLDER, "", 10)
            .await
            .unwrap()
            .into_iter()
            .find(|c| c.id != a)
            .unwrap();
        score_row(state, b, &apps).await.unwrap().unwrap()
    };
    put_app(&world, support_app(false)).await;
    write(state, &[stale]).await.unwrap();
    let (rollups, calls) = store::rollup_totals(&state.db, COMPANY).await.unwrap();
    assert_eq!(rollups.calls, 1, "the stale score was not written");
    assert_eq!(rollups, calls);

    world.analytics.workers = Some(world.analytics.service.spawn_workers());
    rollups_become(&world, &expected(false)).await;
}

async fn a_rescore_killed_midway_counts_no_call_twice_in(mut world: World) {
    world
        .create_folder(ORG, FOLDER, json!({"apps": ["support"]}))
        .await;
    put_app(&world, support_app(true)).await;
    world.add_call(&call_a()).await;
    world.add_call(&call_b()).await;
    rollups_become(&world, &expected(true)).await;
    world
        .analytics
        .workers
        .take()
        .expect("workers")
        .stop()
        .await;

    put_app(&world, support_app(false)).await;
    let state = world.analytics.service.state.clone();
    let stand_in = world.stand_in().await;
    let receive = |topic: &'static str| {
        let bus = stand_in.bus();
        async move {
            bus.receive(topic, Duration::from_secs(5))
                .await
                .unwrap()
                .expect("a rescore job")
        }
    };
    // The application's job fans out into one job for the folder.
    let fan_out = receive(messages::topics::RESCORE).await;
    rescore::handle(state.clone().into_inner(), fan_out.message.body.clone())
        .await
        .unwrap();
    stand_in.bus().ack(fan_out).await.unwrap();
    let job = receive(messages::topics::RESCORE).await;
    // The worker rescores the first call, then dies before the second.
    let apps = FolderApps::load(&state, COMPANY, ORG, FOLDER)
        .await
        .unwrap()
        .unwrap();
    let first = store::calls_after(&state.db, COMPANY, ORG, FOLDER, "", 1)
        .await
        .unwrap()
        .remove(0);
    let scored = score_row(&state, first, &apps).await.unwrap().unwrap();
    write(&state, &[scored]).await.unwrap();
    stand_in.kill(job).await;
    let (rollups, calls) = store::rollup_totals(&state.db, COMPANY).await.unwrap();
    assert_eq!(rollups, calls, "half rescored, each call counted once");
    assert_eq!(rollups.calls, 2);

    // The job is redelivered to a new worker and finishes.
    world.analytics.workers = Some(world.analytics.service.spawn_workers());
    rollups_become(&world, &expected(false)).await;
}

async fn late_and_repeated_scores_change_nothing(stack: Stack) {
    late_and_repeated_scores_change_nothing_in(World::new(stack).await).await
}

async fn a_rescore_killed_midway_counts_no_call_twice(stack: Stack) {
    a_rescore_killed_midway_counts_no_call_twice_in(World::new(stack).await).await
}

crate::stack_tests!(
    calls_are_scored_by_their_folders_applications,
    application_and_folder_changes_rescore_every_call_once,
    late_and_repeated_scores_change_nothing,
    a_rescore_killed_midway_counts_no_call_twice,
);
