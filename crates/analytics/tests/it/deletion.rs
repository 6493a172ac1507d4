//! Deleting a company, organization or folder: the answer comes at once, `GET /config` reports the
//! progress, the job removes every row, stored object and search document, and the object then reads as
//! `Folder not found: <name>`. A worker killed midway leaves its message unacknowledged; the next worker
//! resumes with what is left.

use std::time::Duration;

use analytics_core::jobs::delete::delete_batch;
use analytics_store as store;
use common::search::Scope;
use messages::v1::DeleteScope;
use serde_json::json;

use crate::support::*;

fn org_scope() -> Scope {
    Scope {
        company: COMPANY.into(),
        organization: Some(ORG.into()),
        folder: None,
    }
}

async fn deleting_a_folder_removes_everything_then_reads_as_not_found(stack: Stack) {
    let world = World::with_folder(stack).await;
    world.create_folder(ORG, "keep", json!({})).await;
    let kept = world
        .upload_to(ORG, "keep", &transcript("refund"), None)
        .await;
    assert_eq!(kept.status, 200);
    for topic in ["invoice", "parcel", "contract"] {
        world.add_call(&transcript(topic)).await;
    }
    world.search_until("q=question", |b| b["total"] == 4).await;

    let path = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    let a = world.send("DELETE", &path, None).await;
    assert_eq!(
        (a.status, a.body.clone()),
        (200, json!({"status": "deleting"}))
    );
    let gone = eventually(|| async {
        let a = world.send("GET", &path, None).await;
        match a.status {
            200 => {
                assert_eq!(a.body["status"], "deleting");
                None
            }
            _ => Some(a),
        }
    })
    .await;
    assert_eq!(
        (gone.status, gone.text.as_str()),
        (404, "Folder not found: inbox")
    );

    let state = &world.analytics.service.state;
    let left = state
        .objects
        .list(&format!("{COMPANY}/{ORG}/{FOLDER}/"), None, 10)
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        store::count_calls(&state.db, &org_scope()).await.unwrap(),
        1,
        "the other folder's call"
    );
    let found = world.search_until("q=question", |b| b["total"] == 1).await;
    assert_eq!(found["hits"][0]["folder"], "keep");
    let a = world.upload_to(ORG, FOLDER, &transcript("x"), None).await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, "Folder not found: inbox")
    );
    let org = world
        .send("GET", &format!("/config/{COMPANY}/{ORG}"), None)
        .await;
    assert_eq!(
        (org.body["status"].clone(), org.body["folders"].clone()),
        (json!("OK"), json!(["keep"]))
    );
}

async fn a_killed_deletion_resumes_and_reports_its_progress(stack: Stack) {
    let mut world = World::with_folder(stack).await;
    for i in 0..250 {
        let mut t = transcript("invoice");
        t["filename"] = json!(format!("call-{i}.wav"));
        world.add_call(&t).await;
    }
    // The workers of this replica stop; a stand-in takes the job, deletes one batch and dies.
    world
        .analytics
        .workers
        .take()
        .expect("workers")
        .stop()
        .await;
    let a = world
        .send("DELETE", &format!("/config/{COMPANY}"), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let company = world.send("GET", &format!("/config/{COMPANY}"), None).await;
    assert_eq!(company.body["status"], "deleting (0%)");
    let changes = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}/new"),
            Some(json!({})),
        )
        .await;
    assert_eq!(
        changes.status, 409,
        "nothing is added to what is being deleted: {}",
        changes.text
    );

    let state = world.analytics.service.state.clone();
    let stand_in = world.stand_in().await;
    let delivery = stand_in
        .bus()
        .receive(messages::topics::DELETE, Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the deletion job");
    let job = <DeleteScope as messages::Message>::decode(delivery.message.body.as_slice()).unwrap();
    assert_eq!(
        (job.company.as_str(), job.organization.as_str()),
        (COMPANY, "")
    );
    let scope = Scope {
        company: COMPANY.into(),
        organization: None,
        folder: None,
    };
    assert_eq!(delete_batch(&state, &scope).await.unwrap(), 100);
    stand_in.kill(delivery).await;

    let company = world.send("GET", &format!("/config/{COMPANY}"), None).await;
    assert_eq!(company.body["status"], "deleting (40%)");
    let org = world
        .send("GET", &format!("/config/{COMPANY}/{ORG}"), None)
        .await;
    assert_eq!(
        org.body["status"], "deleting",
        "deleted as part of its company"
    );

    // A new worker gets the message once the dead one's lease has run out, and finishes the job.
    world.analytics.workers = Some(world.analytics.service.spawn_workers());
    let gone = eventually(|| async {
        let a = world.send("GET", &format!("/config/{COMPANY}"), None).await;
        (a.status == 404).then_some(a)
    })
    .await;
    assert_eq!(gone.text, "Folder not found: acme");
    assert_eq!(store::count_calls(&state.db, &scope).await.unwrap(), 0);
    assert!(state.objects.list("", None, 10).await.unwrap().is_empty());
    assert!(store::get_organization(&state.db, COMPANY, ORG)
        .await
        .unwrap()
        .is_none());
    // The company can start over.
    world.create_folder(ORG, FOLDER, json!({})).await;
}

/// A metadata request that read its folder before the deletion marked it may still commit a change of
/// the call: the job waits for the call's row before it goes on, so nothing of the call is written after
/// its objects are removed (here the request also writes the transcript back, as an object write under
/// way would).
async fn a_deletion_waits_for_a_metadata_request_under_way(stack: Stack) {
    if stack.backend() == Backend::Sqlite {
        // The request holds SQLite's database write lock until it commits: no deletion can be marked
        // while it is under way.
        return;
    }
    let mut world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    world
        .analytics
        .workers
        .take()
        .expect("workers")
        .stop()
        .await;
    let state = world.analytics.service.state.clone();
    let key = format!("{COMPANY}/{ORG}/{FOLDER}/{call}/transcript.json");

    // The request's first steps: its call locked, its folder read (still usable).
    let mut request = state.db.begin().await.unwrap();
    store::get_call(&mut request, &call).await.unwrap().unwrap();
    let folder = store::peek_folder(&mut request, COMPANY, ORG, FOLDER)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(folder.status, store::STATUS_OK);

    let a = world
        .send("DELETE", &format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let scope = Scope {
        company: COMPANY.into(),
        organization: Some(ORG.into()),
        folder: Some(FOLDER.into()),
    };
    let job = tokio::spawn({
        let state = state.clone();
        async move { delete_batch(&state, &scope).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!job.is_finished(), "the job waits for the request");
    assert!(
        state.objects.get(&key).await.unwrap().is_some(),
        "nothing removed while the request is under way"
    );

    // The request writes the transcript back and commits.
    state
        .objects
        .put(&key, transcript("changed").to_string().into_bytes())
        .await
        .unwrap();
    request.commit().await.unwrap();
    assert_eq!(job.await.unwrap().unwrap(), 1);
    let left = state
        .objects
        .list(&format!("{COMPANY}/{ORG}/{FOLDER}/"), None, 10)
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    // A request from now on finds the folder being deleted.
    let a = world
        .send(
            "PATCH",
            &format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!({"region": "north"})),
        )
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
}

crate::stack_tests!(
    deleting_a_folder_removes_everything_then_reads_as_not_found,
    a_killed_deletion_resumes_and_reports_its_progress,
    a_deletion_waits_for_a_metadata_request_under_way,
);
