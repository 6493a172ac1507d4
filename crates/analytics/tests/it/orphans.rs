//! The sweep of objects nothing owns (`analytics_core::orphans`). A process killed between writing an
//! upload's object and committing its row leaves the object alone in the store; such objects are put
//! there as that process leaves them, beside a stored call and a transcription request still queued.
//! The sweep removes only the unowned ones, and only once they are older than the grace period.

use std::time::Duration;

use analytics_core::orphans::sweep;

use crate::stack_tests;
use crate::support::{transcript, Stack, World, COMPANY, FOLDER, ORG};

async fn objects_nothing_owns_go_once_past_the_grace(stack: Stack) {
    // No transcription worker: the request stays queued, its recording in the store.
    let world = World::with(stack, |c| {
        c.worker_topics = "reindex,metadata,delete,score,rescore,callback"
            .parse()
            .unwrap();
    })
    .await;
    world
        .create_folder(ORG, FOLDER, serde_json::json!({}))
        .await;
    let state = &world.analytics.service.state;
    let objects = &state.objects;

    let call = world.add_call(&transcript("invoice")).await;
    let stored = format!("{COMPANY}/{ORG}/{FOLDER}/{call}/transcript.json");
    let queued = world
        .upload_as(
            &world.token,
            ORG,
            FOLDER,
            b"a recording".to_vec(),
            "call.wav",
            None,
        )
        .await;
    assert!(queued.status < 300, "{}", queued.text);
    let folder_keys = objects
        .list(&format!("{COMPANY}/{ORG}/{FOLDER}/"), None, 100)
        .await
        .unwrap();
    let recording = folder_keys
        .iter()
        .find(|k| k.ends_with("/audio.wav"))
        .expect("the queued request's recording")
        .clone();

    // What killed uploads leave: a call's transcript and a request's recording, without their rows.
    let lost_call = format!(
        "{COMPANY}/{ORG}/{FOLDER}/{}/transcript.json",
        uuid::Uuid::new_v4()
    );
    let lost_request = format!("{COMPANY}/_requests/{}/audio.wav", uuid::Uuid::new_v4());
    // A key of no shape the platform writes is not judged.
    let unknown = format!("{COMPANY}/notes.txt");
    for key in [&lost_call, &lost_request, &unknown] {
        objects.put(key, b"left".to_vec()).await.unwrap();
    }

    let young = sweep(state, Duration::from_secs(3600)).await.unwrap();
    assert_eq!(young.removed, 0, "nothing younger than the grace goes");
    for key in [&stored, &recording, &lost_call, &lost_request, &unknown] {
        assert!(objects.get(key).await.unwrap().is_some(), "{key} stays");
    }

    // Past the grace (here at once, as if an hour had gone by).
    let swept = sweep(state, Duration::ZERO).await.unwrap();
    assert_eq!(swept.removed, 2, "{swept:?}");
    assert!(swept.listed >= 5, "{swept:?}");
    for key in [&lost_call, &lost_request] {
        assert!(objects.get(key).await.unwrap().is_none(), "{key} is gone");
    }
    for key in [&stored, &recording, &unknown] {
        assert!(objects.get(key).await.unwrap().is_some(), "{key} stays");
    }
}

stack_tests!(objects_nothing_owns_go_once_past_the_grace);
