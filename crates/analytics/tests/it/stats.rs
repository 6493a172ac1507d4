//! `GET /stats`: calls written as the scoring worker writes them (figures, then the rollups), read over
//! HTTP and compared with values computed by hand (docs/figures.md): every field, whole and cut days,
//! organization and folder, invalid ranges, and who may read.

use analytics_store::rollups::{AgentDayDelta, AgentDayKey, RollupChanges};
use analytics_store::{self as store, CallFactsRow, CallRow};
use scoring::model::{CallFacts, Emotion};
use serde_json::{json, Value};

use crate::support::*;

/// A call with its figures, counted in the rollups as the scoring worker counts it.
#[allow(clippy::too_many_arguments)]
pub async fn scored_call(
    world: &World,
    folder: &str,
    id: &str,
    datetime: &str,
    agent: &str,
    figures: (f64, f64, i64, f64, f64),
    emotions: (Option<Emotion>, Option<Emotion>),
) {
    let db = &world.analytics.service.state.db;
    let call = CallRow {
        id: id.into(),
        company: COMPANY.into(),
        organization: ORG.into(),
        folder: folder.into(),
        request_id: format!("r-{id}"),
        datetime: datetime.into(),
        last_modified: "2026-11-23T00:00:00Z".into(),
        filename: format!("{id}.wav"),
        agent_id: agent.into(),
        audio_seconds: figures.0,
    };
    store::insert_calls(db, &[&call]).await.unwrap();
    let facts = CallFacts {
        day: datetime[..10].into(),
        datetime: datetime.into(),
        agent_id: agent.into(),
        duration: figures.0,
        silence: figures.1,
        words: figures.2,
        agent_talk: figures.3,
        client_talk: figures.4,
        agent_emotion: emotions.0,
        client_emotion: emotions.1,
    };
    store::insert_calls_facts(db, &[CallFactsRow::new(&call, &facts, String::new())])
        .await
        .unwrap();
    let mut changes = RollupChanges::default();
    changes.agent(
        AgentDayKey {
            company: COMPANY.into(),
            organization: ORG.into(),
            folder: folder.into(),
            day: facts.day.clone(),
            agent_id: agent.into(),
        },
        &AgentDayDelta::of(&facts, 1),
    );
    store::apply_rollups(db, &changes).await.unwrap();
}

/// Three calls on 20 November (two folders), one on 21 November.
pub async fn calls(world: &World) {
    world.create_folder(ORG, "outbox", json!({})).await;
    use Emotion::*;
    scored_call(
        world,
        FOLDER,
        "c1",
        "2026-11-20T10:00:00",
        "a1",
        (100.0, 10.0, 20, 40.0, 30.0),
        (Some(Positive), Some(Improving)),
    )
    .await;
    scored_call(
        world,
        FOLDER,
        "c2",
        "2026-11-20T15:00:00",
        "a1",
        (200.0, 30.0, 40, 80.0, 60.0),
        (Some(Negative), None),
    )
    .await;
    scored_call(
        world,
        "outbox",
        "c3",
        "2026-11-20T12:00:00",
        "a2",
        (300.0, 50.0, 61, 30.0, 90.0),
        (Some(Worsening), Some(Positive)),
    )
    .await;
    scored_call(
        world,
        FOLDER,
        "c4",
        "2026-11-21T09:00:00",
        "a2",
        (61.0, 1.0, 7, 20.0, 40.0),
        (None, Some(Negative)),
    )
    .await;
}

async fn get(world: &World, path: &str) -> Value {
    let a = world.send("GET", path, None).await;
    assert_eq!(a.status, 200, "{path}: {}", a.text);
    a.body
}

fn dates(days: &Value) -> Vec<&str> {
    days.as_array()
        .unwrap()
        .iter()
        .map(|d| d["date"].as_str().unwrap())
        .collect()
}

async fn every_field_of_a_day(stack: Stack) {
    let world = World::with_folder(stack).await;
    calls(&world).await;
    let days = get(
        &world,
        &format!("/stats/{COMPANY}/{ORG}?daterange=20261120-20261121"),
    )
    .await;
    // 20 Nov: 3 calls, durations 600 s, silence 90 s, words 121, agent talk 150 s (a1: 120 s over 2
    // calls, mean 60; a2: 30 s over 1), client talk 180 s.
    assert_eq!(
        days[0],
        json!({
            "date": "20261120", "calls": 3, "avgduration": "0:03:20", "avgsilence": "0:00:30",
            "avgwords": 40.3333,
            "agent": {"avgcalls": "1.5000",
                      "talk": {"avg": "0:00:50", "min": {"id": "a2", "duration": "0:00:30"},
                               "max": {"id": "a1", "duration": "0:01:00"}},
                      "emotion": {"positive": 1, "worsening": 1, "negative": 1, "improving": 0}},
            "client": {"talk": {"avg": "0:01:00"},
                       "emotion": {"positive": 1, "worsening": 0, "negative": 0, "improving": 1}}
        })
    );
    assert_eq!(days[1]["date"], "20261121");
    assert_eq!(days[1]["calls"], 1);
    assert_eq!(days[1]["avgduration"], "0:01:01");
    assert_eq!(days[1]["agent"]["avgcalls"], "1.0000");
    assert_eq!(days[1]["client"]["emotion"]["negative"], 1);
    assert_eq!(days.as_array().unwrap().len(), 2);

    // One folder: c3 is in outbox.
    let days = get(
        &world,
        &format!("/stats/{COMPANY}/{ORG}/{FOLDER}?daterange=20261120-20261120"),
    )
    .await;
    assert_eq!(dates(&days), ["20261120"]);
    assert_eq!(days[0]["calls"], 2);
    assert_eq!(days[0]["avgduration"], "0:02:30");
    assert_eq!(days[0]["agent"]["talk"]["min"]["id"], "a1");
}

async fn daterange_rules(stack: Stack) {
    let world = World::with_folder(stack).await;
    calls(&world).await;
    let stats = |range: &str| format!("/stats/{COMPANY}/{ORG}?daterange={range}");
    // A cut first day: from 12:00:00 (included) on 20 Nov: c3 (12:00) and c2 (15:00).
    let days = get(&world, &stats("20261120120000-20261121")).await;
    assert_eq!(dates(&days), ["20261120", "20261121"]);
    assert_eq!(days[0]["calls"], 2);
    assert_eq!(days[0]["avgduration"], "0:04:10");
    // Cut on both ends of one day: 10:00:00 to 12:00:00, c1 and c3.
    let days = get(&world, &stats("20261120100000-20261120120000")).await;
    assert_eq!(days[0]["calls"], 2);
    assert_eq!(days[0]["avgduration"], "0:03:20");
    // A cut last day: up to 08:59:59 of 21 Nov leaves it out.
    let days = get(&world, &stats("20261120-20261121085959")).await;
    assert_eq!(dates(&days), ["20261120"]);
    // Defaults: from 1900 to today.
    assert_eq!(
        dates(&get(&world, &stats("-")).await),
        ["20261120", "20261121"]
    );
    assert_eq!(dates(&get(&world, &stats("20261121-")).await), ["20261121"]);
    assert_eq!(dates(&get(&world, &stats("-20261120")).await), ["20261120"]);
    // Start after end, and ranges that do not read: nothing.
    for range in ["20261121-20261120", "20261120", "2026-11-20", "x-"] {
        assert_eq!(get(&world, &stats(range)).await, json!([]), "{range}");
    }
    // Without a range: the current date, on which there are no calls.
    assert_eq!(
        get(&world, &format!("/stats/{COMPANY}/{ORG}")).await,
        json!([])
    );
}

async fn who_may_read(stack: Stack) {
    let world = World::with_folder(stack).await;
    calls(&world).await;
    let path = format!("/stats/{COMPANY}/{ORG}?daterange=20261120-20261120");
    let other = world.other_company("globex").await;
    assert_eq!(
        world.send_as(Some(&other), "GET", &path, None).await.status,
        403
    );
    let write_only = world.token_with_scope("analytics:write").await;
    assert_eq!(
        world
            .send_as(Some(&write_only), "GET", &path, None)
            .await
            .status,
        403
    );
    let read_only = world.token_with_scope("analytics:read").await;
    let a = world.send_as(Some(&read_only), "GET", &path, None).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body[0]["calls"], 3);
    let a = world
        .send("GET", &format!("/stats/{COMPANY}/{ORG}/nope"), None)
        .await;
    assert_eq!((a.status, a.text.as_str()), (404, "Folder not found: nope"));
    let a = world
        .send("GET", &format!("/stats/{COMPANY}/elsewhere"), None)
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, "Folder not found: elsewhere")
    );
}

/// Query parameters are checked as `/appstats` checks them: an unknown one, or one given twice, is a
/// 400 (the first `daterange` was taken, the rest ignored).
async fn unknown_and_repeated_parameters_are_refused(stack: Stack) {
    let world = World::with_folder(stack).await;
    calls(&world).await;
    for (query, says) in [
        ("foo=1&daterange=20261120-", "unknown query parameter foo"),
        (
            "daterange=20261120-&category=x",
            "unknown query parameter category",
        ),
        (
            "daterange=-&daterange=20261120-20261120",
            "daterange is given twice",
        ),
    ] {
        for path in [
            format!("/stats/{COMPANY}/{ORG}?{query}"),
            format!("/stats/{COMPANY}/{ORG}/{FOLDER}?{query}"),
        ] {
            let a = world.send("GET", &path, None).await;
            assert_eq!(a.status, 400, "{path}: {}", a.text);
            assert!(a.content_type.starts_with("text/html"));
            assert!(a.text.starts_with(says), "{path}: {}", a.text);
        }
    }
    // The token may come as a parameter, once.
    let path = format!(
        "/stats/{COMPANY}/{ORG}?daterange=20261120-20261120&token={}",
        world.token
    );
    let a = world.send_as(None, "GET", &path, None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body[0]["calls"], 3);
    let a = world.send("GET", &path, None).await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("token is given twice"), "{}", a.text);
}

crate::stack_tests!(
    every_field_of_a_day,
    daterange_rules,
    who_may_read,
    unknown_and_repeated_parameters_are_refused
);
