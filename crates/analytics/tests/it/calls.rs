//! Adding calls to a folder: a transcript JSON is stored whole in the object store, with its row and
//! its configured metadata in the database; the answer carries the request and call ids; audio gets a
//! clear 415 for now; a malformed transcript is refused with the path of what is wrong and stores nothing.

use analytics::store;
use common::search::Scope;
use serde_json::json;

use crate::support::*;

fn folder_scope() -> Scope {
    Scope {
        company: COMPANY.into(),
        organization: Some(ORG.into()),
        folder: Some(FOLDER.into()),
    }
}

async fn a_transcript_is_stored_with_its_configured_metadata(stack: Stack) {
    let world = World::with_folder(stack).await;
    let a = world
        .upload_to(
            ORG,
            FOLDER,
            &transcript("invoice"),
            Some(json!({"region": "north", "vip": true})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let call = a.body["tId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(call).is_ok());
    assert!(uuid::Uuid::parse_str(a.body["requestid"].as_str().unwrap()).is_ok());

    let stored = world
        .stored_transcript(call)
        .await
        .expect("the transcript is stored");
    assert_eq!(stored["tId"], call);
    assert_eq!(stored["datetime"], "2026-11-20T10:15:00");
    assert_eq!(stored["agent_id"], "agent-7");
    assert_eq!(
        stored["utterances"][1]["text"],
        "I have a question about my invoice"
    );
    assert_eq!(
        stored["metadata"],
        json!({"queue": "billing", "campaign": "autumn", "region": "north", "vip": "true"})
    );

    let db = &world.analytics.service.state.db;
    let row = store::get_call(db, call).await.unwrap().expect("a row");
    assert_eq!((row.folder.as_str(), row.audio_seconds), (FOLDER, 312.5));
    let fields = store::metadata(db, call).await.unwrap();
    assert_eq!(
        fields,
        vec![
            ("queue".into(), "billing".into()),
            ("region".into(), "north".into())
        ],
        "only the configured fields are rows"
    );
}

async fn broken_recordings_and_malformed_transcripts_store_nothing(stack: Stack) {
    let world = World::with_folder(stack).await;
    // Taken for a recording (not JSON), queued, and failed by the worker: no call, no object left.
    let wav = [b"RIFF".as_slice(), &[0u8; 64]].concat();
    let a = world
        .upload_as(&world.token, ORG, FOLDER, wav, "call.wav", None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let progress = world.ended(a.body["requestid"].as_str().unwrap()).await;
    assert_eq!(progress["status"], "failed", "{progress}");
    assert!(
        progress["error"].as_str().unwrap().contains("audio"),
        "{progress}"
    );

    let mut bad = transcript("x");
    bad["utterances"][1]["end"] = json!(1.0);
    let a = world.upload_to(ORG, FOLDER, &bad, None).await;
    assert_eq!(a.status, 400);
    assert!(a.text.contains("utterances[1]"), "{}", a.text);
    let a = world
        .upload_to(ORG, FOLDER, &transcript("x"), Some(json!({"tId": "mine"})))
        .await;
    assert_eq!(a.status, 400);
    assert!(a.text.contains("reserved"), "{}", a.text);
    let a = world
        .upload_to(ORG, "nowhere", &transcript("x"), None)
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, "Folder not found: nowhere")
    );

    let db = &world.analytics.service.state.db;
    assert_eq!(store::count_calls(db, &folder_scope()).await.unwrap(), 0);
    let objects = world
        .analytics
        .service
        .state
        .objects
        .list("", None, 10)
        .await
        .unwrap();
    assert!(objects.is_empty(), "{objects:?}");
}

async fn a_form_without_file_or_with_unknown_fields_is_refused(stack: Stack) {
    let world = World::with_folder(stack).await;
    let url = world.url(&format!("/transcribe/{COMPANY}/{ORG}/{FOLDER}"), None);
    for (form, says) in [
        (
            reqwest::multipart::Form::new().text("token", world.token.clone()),
            "file field is missing",
        ),
        (
            reqwest::multipart::Form::new()
                .text("token", world.token.clone())
                .text("file", "{}")
                .text("colour", "blue"),
            "unknown form field",
        ),
        (
            reqwest::multipart::Form::new()
                .text("token", world.token.clone())
                .text("token", world.token.clone()),
            "twice",
        ),
    ] {
        let a = read(
            reqwest::Client::new()
                .post(&url)
                .multipart(form)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(a.status, 400, "{}", a.text);
        assert!(a.text.contains(says), "{}", a.text);
    }
}

async fn an_upload_over_the_limit_is_refused(stack: Stack) {
    let world = World::with(stack, |c| c.max_upload_bytes = 4096).await;
    world.create_folder(ORG, FOLDER, json!({})).await;
    let mut big = transcript("x");
    big["padding"] = json!("x".repeat(8192));
    let a = world.upload_to(ORG, FOLDER, &big, None).await;
    assert_eq!(a.status, 413, "{}", a.text);
}

crate::stack_tests!(
    a_transcript_is_stored_with_its_configured_metadata,
    broken_recordings_and_malformed_transcripts_store_nothing,
    a_form_without_file_or_with_unknown_fields_is_refused,
    an_upload_over_the_limit_is_refused,
);
