//! `GET /appmatches`: a call of a folder whose `apps` name two stored applications and one that does not
//! exist, scored by hand. Without a body every leaf has its match data; with one, only the named
//! categories and what is below them; exclude phrases are listed with their matches even where they
//! changed nothing; a call nothing matched has no scorecard; the call must be in the path's company and
//! organization.

use serde_json::{json, Value};

use crate::support::*;

fn billing() -> Value {
    json!({"categories": {
        "Greeting": {"phrases": [{"text": "thank* you", "speaker": "agent"}, "how can i help"]},
        "Sales": {"subcategories": {
            "Upsell": {"phrases": ["premium", "-no premium"]},
            "Refund": {"subcategories": {
                "Asked": {"phrases": [{"text": "refund", "speaker": "client"}]},
                "Escalated": {"phrases": ["manager"]}
            }}
        }}
    }})
}

const T0: &str = "Thank you for calling, how can I help?";
const T1: &str = "I want a refund, the premium plan is too expensive";
const T2: &str = "I can offer no premium but a refund";

fn call() -> Value {
    let words: Vec<Value> = [
        ("Thank", 0.5, 0.75),
        ("you", 0.75, 1.0),
        ("for", 1.0, 1.25),
        ("calling,", 1.25, 1.5),
        ("how", 1.75, 2.0),
        ("can", 2.0, 2.25),
        ("I", 2.25, 2.5),
        ("help?", 2.5, 3.0),
    ]
    .iter()
    .map(|(word, start, end)| json!({"word": word, "start": start, "end": end}))
    .collect();
    json!({
        "filename": "call-0042.wav", "datetime": "2026-11-20T10:15:00", "agent_id": "agent-7",
        "audio_seconds": 15.0,
        "utterances": [
            {"speaker": "agent", "start": 0.5, "end": 3.0, "text": T0, "words": words},
            {"speaker": "client", "start": 3.5, "end": 8.0, "text": T1},
            {"speaker": "agent", "start": 8.5, "end": 12.0, "text": T2},
            {"speaker": "client", "start": 12.5, "end": 15.0, "text": "Thank you, goodbye"}
        ]
    })
}

/// Folder `inbox` uses billing, an application that does not exist, and support.
async fn world(stack: Stack) -> World {
    let world = World::new(stack).await;
    world
        .create_folder(
            ORG,
            FOLDER,
            json!({"apps": ["billing", "ghost", "support"]}),
        )
        .await;
    for (app, body) in [
        ("billing", billing()),
        (
            "support",
            json!({"categories": {"Escalation": {"phrases": ["supervisor"]}}}),
        ),
    ] {
        let a = world
            .send("PUT", &format!("/apps/{COMPANY}/{app}"), Some(body))
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
    }
    world
}

fn path(call: &str) -> String {
    format!("/appmatches/{COMPANY}/{ORG}/{call}")
}

// Greeting, agent turn 0: "thank* you" on Thank..you (0.5 to 1.0) and "how can i help" on how..help?
// (1.75 to 3.0): 2; the client's "Thank you" (turn 3) does not count.
// Upsell: turn 1 "premium" 1; turn 2 "premium" and "-no premium": max(1 - 1, 0) = 0. Score 1.
// Asked: the client's refund in turn 1 (turn 2 is the agent's): 1. Escalated: 0. Refund 1, Sales 2.
fn greeting() -> Value {
    json!({"score": 2, "match_data": [
        {"phrase": "thank* you", "matches": [[0.5, 1.0, "agent", T0]]},
        {"phrase": "how can i help", "matches": [[1.75, 3.0, "agent", T0]]}
    ]})
}

fn upsell() -> Value {
    json!({"score": 1, "match_data": [
        {"phrase": "premium", "matches": [[3.5, 8.0, "client", T1], [8.5, 12.0, "agent", T2]]},
        {"phrase": "-no premium", "matches": [[8.5, 12.0, "agent", T2]]}
    ]})
}

fn asked() -> Value {
    json!({"score": 1, "match_data": [{"phrase": "refund", "matches": [[3.5, 8.0, "client", T1]]}]})
}

fn escalated() -> Value {
    json!({"score": 0, "match_data": [{"phrase": "manager", "matches": []}]})
}

async fn every_leaf_has_its_matches_without_a_body(stack: Stack) {
    let world = world(stack).await;
    let id = world.add_call(&call()).await;
    let a = world.send("GET", &path(&id), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body,
        json!({
            "filename": "call-0042.wav", "tId": id, "organization": ORG,
            "scorecard": {
                "billing": {
                    "Greeting": greeting(),
                    "Sales": {"score": 2, "subcategories": {
                        "Upsell": upsell(),
                        "Refund": {"score": 1, "subcategories": {"Asked": asked(), "Escalated": escalated()}}
                    }}
                },
                "support": {"Escalation": {"score": 0, "match_data": [{"phrase": "supervisor", "matches": []}]}}
            }
        })
    );
}

async fn a_body_names_the_categories_that_get_matches(stack: Stack) {
    let world = world(stack).await;
    let id = world.add_call(&call()).await;
    let a = world
        .send(
            "GET",
            &path(&id),
            Some(json!({"billing": ["Sales.Refund"]})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body["scorecard"],
        json!({"billing": {
            "Greeting": {"score": 2},
            "Sales": {"score": 2, "subcategories": {
                "Upsell": {"score": 1},
                "Refund": {"score": 1, "subcategories": {"Asked": asked(), "Escalated": escalated()}}
            }}
        }}),
        "support is not named: left out"
    );

    // Any depth, several paths, and an application named with no path: its scores only.
    let a = world
        .send(
            "GET",
            &path(&id),
            Some(json!({"billing": ["Sales.Refund.Asked", "Sales.Upsell"], "support": []})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body["scorecard"],
        json!({
            "billing": {
                "Greeting": {"score": 2},
                "Sales": {"score": 2, "subcategories": {
                    "Upsell": upsell(),
                    "Refund": {"score": 1, "subcategories": {"Asked": asked(), "Escalated": {"score": 0}}}
                }}
            },
            "support": {"Escalation": {"score": 0}}
        })
    );

    for (body, message) in [
        (
            json!({"ghost": ["Greeting"]}),
            "Application not found: ghost (the call&#39;s folder has no such application)",
        ),
        (
            json!({"billing": ["Sales.Nope"]}),
            "Category not found: Sales.Nope of application billing",
        ),
        (
            json!({"billing": ["Sales.Up"]}),
            "Category not found: Sales.Up of application billing",
        ),
    ] {
        let a = world.send("GET", &path(&id), Some(body.clone())).await;
        assert_eq!((a.status, a.text.as_str()), (404, message), "{body}");
    }
    let a = world
        .send("GET", &path(&id), Some(json!({"billing": "Greeting"})))
        .await;
    assert_eq!(a.status, 400, "paths come in an array: {}", a.text);
}

async fn a_call_nothing_matched_has_no_scorecard(stack: Stack) {
    let world = world(stack).await;
    let mut quiet = call();
    quiet["utterances"] = json!([
        {"speaker": "agent", "start": 0.0, "end": 2.0, "text": "Good morning"},
        {"speaker": "client", "start": 2.5, "end": 4.0, "text": "Thank you"}
    ]);
    let id = world.add_call(&quiet).await;
    let a = world.send("GET", &path(&id), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body,
        json!({"filename": "call-0042.wav", "tId": id, "organization": ORG})
    );

    // A folder whose applications do not exist scores nothing either.
    world
        .create_folder(ORG, "other", json!({"apps": ["ghost"]}))
        .await;
    let a = world.upload_to(ORG, "other", &call(), None).await;
    let other = a.body["tId"].as_str().unwrap().to_string();
    let a = world.send("GET", &path(&other), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(a.body.get("scorecard").is_none(), "{}", a.body);
}

/// A call whose phrases matched but scored 0 (the exclude phrase in the same turn as the include) has its
/// scorecard: score 0 and both phrases with their matches, with or without a body naming the category.
async fn matches_that_score_nothing_are_still_shown(stack: Stack) {
    let world = World::new(stack).await;
    world
        .create_folder(ORG, FOLDER, json!({"apps": ["churn"]}))
        .await;
    let app = json!({"categories": {"Cancel": {"phrases": ["cancel my account", "-not cancel"]}}});
    let a = world
        .send("PUT", &format!("/apps/{COMPANY}/churn"), Some(app))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let mut kept = call();
    let text = "I will not cancel my account today";
    kept["utterances"] = json!([{"speaker": "client", "start": 1.0, "end": 4.0, "text": text}]);
    let id = world.add_call(&kept).await;
    let expected = json!({"churn": {"Cancel": {"score": 0, "match_data": [
        {"phrase": "cancel my account", "matches": [[1.0, 4.0, "client", text]]},
        {"phrase": "-not cancel", "matches": [[1.0, 4.0, "client", text]]}
    ]}}});
    for body in [None, Some(json!({"churn": ["Cancel"]}))] {
        let a = world.send("GET", &path(&id), body.clone()).await;
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(a.body["scorecard"], expected, "{body:?}: {}", a.body);
    }
}

async fn the_call_must_be_in_the_path_and_the_token_of_its_company(stack: Stack) {
    let world = world(stack).await;
    let id = world.add_call(&call()).await;
    world
        .create_folder("sales", "inbox", json!({"apps": ["billing"]}))
        .await;
    let a = world
        .send("GET", &format!("/appmatches/{COMPANY}/sales/{id}"), None)
        .await;
    assert_eq!(
        (a.status, a.text.clone()),
        (404, format!("Transcript not found: {id}"))
    );
    let a = world
        .send("GET", &path("6f1c2f3e-0000-4000-8000-000000000000"), None)
        .await;
    assert_eq!(a.status, 404);

    let globex = world.other_company("globex").await;
    let a = world.send_as(Some(&globex), "GET", &path(&id), None).await;
    assert_eq!(a.status, 403, "{}", a.text);
    let a = world
        .send_as(
            Some(&globex),
            "GET",
            &format!("/appmatches/globex/{ORG}/{id}"),
            None,
        )
        .await;
    assert_eq!(
        (a.status, a.text.clone()),
        (404, format!("Transcript not found: {id}"))
    );
    let write = world.token_with_scope("analytics:write").await;
    let a = world.send_as(Some(&write), "GET", &path(&id), None).await;
    assert_eq!(a.status, 403, "reads need analytics:read");
    let read = world.token_with_scope("analytics:read").await;
    let a = world.send_as(Some(&read), "GET", &path(&id), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["scorecard"]["billing"]["Greeting"], greeting());
}

async fn changed_applications_show_at_once(stack: Stack) {
    let world = world(stack).await;
    let id = world.add_call(&call()).await;
    let mut changed = billing();
    changed["categories"]["Sales"]["subcategories"]["Refund"]["subcategories"]["Escalated"] =
        json!({"phrases": ["too expensive"]});
    let a = world
        .send("PUT", &format!("/apps/{COMPANY}/billing"), Some(changed))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let a = world
        .send(
            "GET",
            &path(&id),
            Some(json!({"billing": ["Sales.Refund.Escalated"]})),
        )
        .await;
    assert_eq!(
        a.body["scorecard"]["billing"]["Sales"],
        json!({"score": 3, "subcategories": {
            "Upsell": {"score": 1},
            "Refund": {"score": 2, "subcategories": {
                "Asked": {"score": 1},
                "Escalated": {"score": 1, "match_data": [
                    {"phrase": "too expensive", "matches": [[3.5, 8.0, "client", T1]]}
                ]}
            }}
        }})
    );
    // Deleted, the application is skipped like one that never existed.
    world
        .send("DELETE", &format!("/apps/{COMPANY}/billing"), None)
        .await;
    let a = world.send("GET", &path(&id), None).await;
    assert!(a.body.get("scorecard").is_none(), "{}", a.body);
}

crate::stack_tests!(
    matches_that_score_nothing_are_still_shown,
    every_leaf_has_its_matches_without_a_body,
    a_body_names_the_categories_that_get_matches,
    a_call_nothing_matched_has_no_scorecard,
    the_call_must_be_in_the_path_and_the_token_of_its_company,
    changed_applications_show_at_once,
);
