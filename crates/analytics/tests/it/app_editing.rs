//! What an application editor stands on: `GET /apps/{company}` lists the company's applications,
//! `POST /phrases/{company}` says whether each phrase reads (with the message a `PUT` would give), and
//! `GET /apps/{company}/{app}/rescoring` counts the calls of the folders using an application that are
//! scored with it as it is now, until a change is rescored. Other companies see none of it.

use serde_json::{json, Value};

use crate::support::*;

fn billing(phrase: &str) -> Value {
    json!({"categories": {"Sales": {"phrases": [phrase, "-no premium"]}}})
}

async fn put_app(world: &World, app: &str, body: Value) {
    let a = world
        .send("PUT", &format!("/apps/{COMPANY}/{app}"), Some(body))
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
}

async fn applications_are_listed_by_name(stack: Stack) {
    let world = World::with_folder(stack).await;
    let a = world.send("GET", &format!("/apps/{COMPANY}"), None).await;
    assert_eq!(
        (a.status, &a.body),
        (200, &json!({"company": COMPANY, "apps": []}))
    );
    put_app(&world, "sales", billing("premium")).await;
    put_app(&world, "billing", billing("refund")).await;
    let a = world.send("GET", &format!("/apps/{COMPANY}"), None).await;
    assert_eq!(a.body["apps"], json!(["billing", "sales"]));
    let globex = world.other_company("globex").await;
    let a = world
        .send_as(Some(&globex), "GET", &format!("/apps/{COMPANY}"), None)
        .await;
    assert_eq!(a.status, 403, "{}", a.text);
}

async fn phrases_are_checked_one_by_one_as_a_put_checks_them(stack: Stack) {
    let world = World::with_folder(stack).await;
    let a = world
        .send(
            "POST",
            &format!("/phrases/{COMPANY}"),
            Some(json!([
                "thank* for calling",
                "refund &",
                "-no premium",
                "^"
            ])),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let answers = a.body.as_array().unwrap();
    assert_eq!(answers.len(), 4);
    assert!(answers[0].is_null() && answers[2].is_null(), "{}", a.text);
    assert_eq!(answers[1]["position"], 8);
    assert_eq!(answers[1]["reason"], "nothing after '&'");

    // The message is the one the application's PUT gives for that phrase.
    let put = world
        .send(
            "PUT",
            &format!("/apps/{COMPANY}/sales"),
            Some(billing("refund &")),
        )
        .await;
    assert_eq!(put.status, 400);
    let message = answers[1]["message"].as_str().unwrap();
    // Errors are text/html: escaped.
    let said = put
        .text
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    assert!(said.ends_with(message), "{said} / {message}");

    for body in [json!({"phrases": []}), json!([1]), json!(vec!["a"; 10_001])] {
        let a = world
            .send("POST", &format!("/phrases/{COMPANY}"), Some(body))
            .await;
        assert_eq!(a.status, 400, "{}", a.text);
    }
    let globex = world.other_company("globex").await;
    let a = world
        .send_as(
            Some(&globex),
            "POST",
            &format!("/phrases/{COMPANY}"),
            Some(json!(["a"])),
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.text);
}

async fn progress(world: &World, app: &str) -> Value {
    let a = world
        .send("GET", &format!("/apps/{COMPANY}/{app}/rescoring"), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body
}

/// Without a scoring worker, the folder's calls stay unscored and the progress says so.
async fn calls_not_yet_scored_are_counted_as_left(stack: Stack) {
    let world = World::with(stack, |c| {
        c.worker_topics = "reindex,metadata,delete,transcribe,callback"
            .parse()
            .unwrap()
    })
    .await;
    world
        .create_folder(ORG, FOLDER, json!({"apps": ["sales"]}))
        .await;
    world.create_folder(ORG, "other", json!({"apps": []})).await;
    put_app(&world, "sales", billing("premium")).await;
    world.add_call(&transcript("premium")).await;
    world.add_call(&transcript("refund")).await;
    let body = progress(&world, "sales").await;
    assert_eq!(
        (&body["calls"], &body["scored"]),
        (&json!(2), &json!(0)),
        "{body}"
    );
    assert_eq!(
        body["folders"],
        json!([{"organization": ORG, "folder": FOLDER, "calls": 2, "scored": 0}]),
        "only the folders using the application"
    );
}

/// With the workers, a change is rescored: the progress reaches every call with the new revision.
async fn a_change_is_followed_until_every_call_is_rescored(stack: Stack) {
    let world = World::with_folder(stack).await;
    world
        .create_folder(ORG, FOLDER, json!({"apps": ["sales"]}))
        .await;
    put_app(&world, "sales", billing("premium")).await;
    world.add_call(&transcript("premium")).await;
    world.add_call(&transcript("refund")).await;
    let first = eventually(|| async {
        let body = progress(&world, "sales").await;
        (body["scored"] == 2).then_some(body)
    })
    .await;
    put_app(&world, "sales", billing("refund")).await;
    let after = eventually(|| async {
        let body = progress(&world, "sales").await;
        (body["scored"] == 2 && body["revision"] != first["revision"]).then_some(body)
    })
    .await;
    assert_eq!(after["calls"], 2, "{after}");
    let a = world
        .send("GET", &format!("/apps/{COMPANY}/ghost/rescoring"), None)
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, "Application not found: ghost")
    );
    let globex = world.other_company("globex").await;
    let a = world
        .send_as(
            Some(&globex),
            "GET",
            &format!("/apps/{COMPANY}/sales/rescoring"),
            None,
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.text);
}

crate::stack_tests!(
    applications_are_listed_by_name,
    phrases_are_checked_one_by_one_as_a_put_checks_them,
    calls_not_yet_scored_are_counted_as_left,
    a_change_is_followed_until_every_call_is_rescored,
);
