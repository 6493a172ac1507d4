//! Adding calls to a folder: a transcript JSON is stored whole in the object store, with its row and
//! its configured metadata in the database; the answer carries the request and call ids; audio gets a
//! clear 415 for now; a malformed transcript is refused with the path of what is wrong and stores nothing.

use analytics_core::calls::batch::queue_key;
use analytics_store as store;
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

/// A part whose headers never end is held by the multipart parser until they do: the form is refused
/// once it runs a MiB past its fields' contents, not read to its end (3 MiB here, or any length).
async fn a_form_whose_part_headers_never_end_is_refused_as_it_is_read(stack: Stack) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let world = World::with_folder(stack).await;
    let url = world.url(
        &format!("/transcribe/{COMPANY}/{ORG}/{FOLDER}"),
        Some(&world.token),
    );
    let address = world
        .analytics
        .url
        .trim_start_matches("http://")
        .to_string();
    let target = url.trim_start_matches(&world.analytics.url).to_string();
    let mut body = b"--b\r\nContent-Disposition: form-data; name=\"file\"\r\nX-Pad: ".to_vec();
    body.resize(3 << 20, b'a');
    let head = format!(
        "POST {target} HTTP/1.1\r\nHost: {address}\r\nContent-Type: multipart/form-data; boundary=b\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // The server answers, and stops reading, before the body is sent whole.
    let write = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        writer.write_all(&body).await?;
        writer.flush().await
    });
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(_) if !answer.is_empty() => break,
            Err(e) => panic!("{e}"),
        }
    }
    let _ = write.await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("besides its fields"), "{answer}");
}

async fn an_upload_over_the_limit_is_refused(stack: Stack) {
    let world = World::with(stack, |c| c.max_upload_bytes = 4096).await;
    world.create_folder(ORG, FOLDER, json!({})).await;
    let mut big = transcript("x");
    big["padding"] = json!("x".repeat(8192));
    let a = world.upload_to(ORG, FOLDER, &big, None).await;
    assert_eq!(a.status, 413, "{}", a.text);
}

/// Uploads that arrive while a batch of calls is being committed are committed together in the next
/// one, each its own call with its own answer; an upload to a folder removed after the upload checked it
/// is refused alone, its transcript removed, and fails none of the others.
async fn uploads_waiting_behind_a_batch_are_committed_together(stack: Stack) {
    let world = World::with_folder(stack).await;
    let state = &world.analytics.service.state;
    let batches = &state.call_batches;
    let shard = |folder: &str| batches.shard_of(&queue_key(COMPANY, ORG, folder));
    let missing = (0..)
        .map(|i| format!("missing-{i}"))
        .find(|f| shard(f) == shard(FOLDER))
        .unwrap();
    // There when the upload checks it; removed (by the transaction held below) before its batch runs.
    world.create_folder(ORG, &missing, json!({})).await;
    let missing_scope = Scope {
        folder: Some(missing.clone()),
        ..folder_scope()
    };

    // Holds the batch of the first upload: SQLite's write turn, or the folder's row on PostgreSQL.
    let mut held = state.db.begin().await.unwrap();
    store::get_folder(&mut held, COMPANY, ORG, FOLDER)
        .await
        .unwrap()
        .unwrap();
    let before = batches.taken();
    let [t0, ta, tb, tc, td] = ["first", "a", "b", "c", "d"].map(transcript);
    let first = world.upload_to(ORG, FOLDER, &t0, None);
    let rest = async {
        // Sent once the first upload's batch is under way, so they wait for the next.
        eventually(|| async { (batches.taken() == before + 1).then_some(()) }).await;
        let others = futures_util::future::join_all([
            world.upload_to(ORG, FOLDER, &ta, Some(json!({"region": "east"}))),
            world.upload_to(ORG, FOLDER, &tb, Some(json!({"region": "west"}))),
            world.upload_to(ORG, &missing, &tc, None),
            world.upload_to(ORG, FOLDER, &td, None),
        ]);
        let release = async {
            eventually(|| async { (batches.waiting() == 4).then_some(()) }).await;
            store::delete_scope_rows(&mut held, &missing_scope)
                .await
                .unwrap();
            held.commit().await.unwrap();
        };
        futures_util::join!(others, release).0
    };
    let (first, others) = futures_util::join!(first, rest);
    assert_eq!(
        batches.taken(),
        before + 2,
        "the four waiting uploads made one batch"
    );

    assert_eq!(first.status, 200, "{}", first.text);
    let [east, west, not_there, plain] = others.try_into().unwrap();
    assert_eq!(not_there.status, 404);
    assert_eq!(not_there.text, format!("Folder not found: {missing}"));
    let prefix = format!("{COMPANY}/{ORG}/{missing}/");
    assert_eq!(
        state.objects.list(&prefix, None, 10).await.unwrap(),
        Vec::<String>::new(),
        "the refused upload's transcript is removed"
    );
    let db = &state.db;
    let mut calls = Vec::new();
    for (answer, region) in [
        (&first, None),
        (&east, Some("east")),
        (&west, Some("west")),
        (&plain, None),
    ] {
        assert_eq!(answer.status, 200, "{}", answer.text);
        let call = answer.body["tId"].as_str().unwrap().to_string();
        let row = store::get_call(db, &call).await.unwrap().expect("a row");
        assert_eq!(row.folder, FOLDER);
        let fields = store::metadata(db, &call).await.unwrap();
        let expected: Vec<(String, String)> = std::iter::once(("queue".into(), "billing".into()))
            .chain(region.map(|r| ("region".to_string(), r.to_string())))
            .collect();
        assert_eq!(fields, expected, "{call}");
        assert!(world.stored_transcript(&call).await.is_some());
        calls.push(call);
    }
    calls.sort();
    calls.dedup();
    assert_eq!(calls.len(), 4, "four calls");
    // Each is announced: indexed and scored like any call.
    let found = world
        .search_until("q=question", |page| page["total"] == 4)
        .await;
    assert_eq!(found["total"], 4);
    for call in &calls {
        eventually(|| async { store::call_facts(db, call).await.unwrap() }).await;
    }
}

/// An /appstats day holds its agents beside its own `date` and `agents` keys: a transcript whose
/// `agent_id` is one of them is refused, naming the field, and stores nothing.
async fn agent_ids_that_name_an_appstats_key_are_refused(stack: Stack) {
    let world = World::with_folder(stack).await;
    for agent in ["date", "agents"] {
        let mut call = transcript("x");
        call["agent_id"] = json!(agent);
        let a = world.upload_to(ORG, FOLDER, &call, None).await;
        assert_eq!(a.status, 400, "{agent}: {}", a.text);
        assert!(
            a.content_type.starts_with("text/html"),
            "{}",
            a.content_type
        );
        assert!(a.text.contains("agent_id"), "{agent}: {}", a.text);
        assert!(a.text.contains(agent), "{agent}: {}", a.text);
    }
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
    // Other ids, whatever their case, are agents like any.
    for agent in ["Date", "agent"] {
        let mut call = transcript("x");
        call["agent_id"] = json!(agent);
        world.add_call(&call).await;
    }
}

/// An upload names its folder in the path: a name that cannot be a folder's is a 400, a folder that
/// is not there a 404, both before anything is stored (no object, no directory of the local store).
async fn a_bad_or_missing_folder_is_refused_before_anything_is_stored(stack: Stack) {
    let world = World::with_folder(stack).await;
    let long = "f".repeat(300);
    for (folder, status) in [
        ("..%2F..%2Fetc", 400),
        ("a%20b", 400),
        (".hidden", 400),
        (long.as_str(), 400),
        ("nosuch", 404),
    ] {
        let a = world.upload_to(ORG, folder, &transcript("x"), None).await;
        assert_eq!(a.status, status, "{folder}: {}", a.text);
        assert!(a.content_type.starts_with("text/html"), "{folder}");
        if status == 400 {
            assert!(
                a.text.contains("invalid folder name"),
                "{folder}: {}",
                a.text
            );
        } else {
            assert_eq!(a.text, "Folder not found: nosuch");
        }
    }
    let state = &world.analytics.service.state;
    assert_eq!(
        state.objects.list("", None, 10).await.unwrap(),
        Vec::<String>::new()
    );
    if let Stack::Embedded(_) = stack {
        let org_dir = world
            .analytics
            .data_dir
            .join("objects")
            .join(COMPANY)
            .join(ORG);
        let left: Vec<_> = std::fs::read_dir(&org_dir)
            .map(|dir| dir.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{org_dir:?} holds {left:?}");
    }
}

crate::stack_tests!(
    a_bad_or_missing_folder_is_refused_before_anything_is_stored,
    agent_ids_that_name_an_appstats_key_are_refused,
    a_transcript_is_stored_with_its_configured_metadata,
    uploads_waiting_behind_a_batch_are_committed_together,
    broken_recordings_and_malformed_transcripts_store_nothing,
    a_form_without_file_or_with_unknown_fields_is_refused,
    an_upload_over_the_limit_is_refused,
    a_form_whose_part_headers_never_end_is_refused_as_it_is_read,
);
