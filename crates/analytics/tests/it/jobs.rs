//! `GET /jobs/{company}`: a company's latest transcription requests with their progress, newest first,
//! and what of it is being deleted with how far that is; another company sees none of it.

use serde_json::json;

use crate::support::*;
use crate::transcription::Field;

async fn not_audio(world: &World, name: &str) -> String {
    let a = world
        .transcribe_form(
            "/transcribe",
            vec![Field::File(name, b"this is not a recording".to_vec())],
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text);
    a.body["requestid"].as_str().unwrap().to_string()
}

async fn transcriptions_are_listed_newest_first(stack: Stack) {
    let world = World::new(stack).await;
    let first = not_audio(&world, "first.wav").await;
    let second = not_audio(&world, "second.wav").await;
    let a = world.send("GET", &format!("/jobs/{COMPANY}"), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let listed = a.body["transcriptions"].as_array().unwrap();
    let ids: Vec<&str> = listed
        .iter()
        .map(|r| r["requestid"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second.as_str(), first.as_str()]);
    assert_eq!(listed[0]["status"], "failed");
    assert_eq!(listed[0]["filename"], "second.wav");
    assert_eq!(a.body["deletions"], json!([]));

    let a = world
        .send("GET", &format!("/jobs/{COMPANY}?limit=1"), None)
        .await;
    assert_eq!(a.body["transcriptions"].as_array().unwrap().len(), 1);
    for limit in ["0", "201", "x"] {
        let a = world
            .send("GET", &format!("/jobs/{COMPANY}?limit={limit}"), None)
            .await;
        assert_eq!(a.status, 400, "{limit}: {}", a.text);
    }

    let globex = world.other_company("globex").await;
    let a = world
        .send_as(Some(&globex), "GET", &format!("/jobs/{COMPANY}"), None)
        .await;
    assert_eq!(a.status, 403, "{}", a.text);
    let a = world
        .send_as(Some(&globex), "GET", "/jobs/globex", None)
        .await;
    assert_eq!(a.body["transcriptions"], json!([]), "{}", a.text);
}

/// Without a deletion worker, a folder's deletion stays under way and is listed with its progress.
async fn deletions_under_way_are_listed(stack: Stack) {
    let world = World::with(stack, |c| {
        c.worker_topics = "reindex,metadata,score,rescore,transcribe,callback"
            .parse()
            .unwrap()
    })
    .await;
    world.create_folder(ORG, FOLDER, json!({})).await;
    world.add_call(&transcript("refund")).await;
    let a = world
        .send("DELETE", &format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let a = world.send("GET", &format!("/jobs/{COMPANY}"), None).await;
    assert_eq!(
        a.body["deletions"],
        json!([{"organization": ORG, "folder": FOLDER, "status": "deleting (0%)"}]),
        "{}",
        a.text
    );
}

crate::stack_tests!(
    transcriptions_are_listed_newest_first,
    deletions_under_way_are_listed,
);
