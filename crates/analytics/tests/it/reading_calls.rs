//! `GET /calls/{company}/{organization}/{tId}` and its `/audio`: a call reads as it was added, with the
//! metadata its last change answered even before the metadata worker has written it; its recording is
//! served whole and by byte range; another company, another organization, a call added as a transcript
//! find nothing.

use serde_json::{json, Value};

use crate::support::*;

fn path(call: &str) -> String {
    format!("/calls/{COMPANY}/{ORG}/{call}")
}

async fn a_call_reads_with_the_metadata_of_its_last_change(stack: Stack) {
    let world = World::with_folder(stack).await;
    let added = transcript("refund");
    let id = world.add_call(&added).await;
    let changed = world
        .send(
            "PATCH",
            &format!("/metadata/{COMPANY}/{ORG}/{id}"),
            Some(json!({"queue": "billing", "note": "called back"})),
        )
        .await;
    assert_eq!(changed.status, 200, "{}", changed.text);

    // At once: the change may still be pending on the call's row.
    let a = world.send("GET", &path(&id), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert!(
        a.content_type.starts_with("application/json"),
        "{}",
        a.content_type
    );
    assert_eq!(a.body["tId"], id.as_str());
    assert_eq!(
        (&a.body["organization"], &a.body["folder"]),
        (&json!(ORG), &json!(FOLDER))
    );
    assert_eq!(a.body["utterances"], added["utterances"]);
    assert_eq!(a.body["filename"], added["filename"]);
    assert_eq!(a.body["audio"], false);
    assert_eq!(a.body["last_modified"], changed.body["last_modified"]);
    assert_eq!(a.body["metadata"]["queue"], "billing");
    assert_eq!(a.body["metadata"]["note"], "called back");

    // A removal reads at once too.
    let removed = world
        .send(
            "DELETE",
            &format!("/metadata/{COMPANY}/{ORG}/{id}"),
            Some(json!(["note"])),
        )
        .await;
    assert_eq!(removed.status, 200, "{}", removed.text);
    let a = world.send("GET", &path(&id), None).await;
    assert_eq!(
        a.body["metadata"],
        json!({"campaign": "autumn", "queue": "billing"}),
        "{}",
        a.text
    );
    assert_eq!(a.body["last_modified"], removed.body["last_modified"]);
}

async fn only_its_company_and_organization_find_a_call(stack: Stack) {
    let world = World::with_folder(stack).await;
    let id = world.add_call(&transcript("refund")).await;
    let other = world.other_company("globex").await;
    for (token, path) in [
        (Some(other.as_str()), path(&id)),
        (Some(other.as_str()), format!("{}/audio", path(&id))),
        (Some(other.as_str()), format!("/calls/globex/{ORG}/{id}")),
        (None, path(&id)),
    ] {
        let a = world.send_as(token, "GET", &path, None).await;
        assert!(
            [401, 403, 404].contains(&a.status),
            "{path}: {} {}",
            a.status,
            a.text
        );
        assert!(a.body.get("utterances").is_none(), "{path}: {}", a.text);
    }
    world.create_folder("sales", FOLDER, json!({})).await;
    let a = world
        .send("GET", &format!("/calls/{COMPANY}/sales/{id}"), None)
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, format!("Transcript not found: {id}").as_str())
    );
    let a = world.send("GET", &path("no-such-call"), None).await;
    assert_eq!(a.status, 404, "{}", a.text);
}

async fn a_recording_is_served_whole_and_by_range(stack: Stack) {
    let world = World::with_folder(stack).await;
    let id = world.add_call(&transcript("refund")).await;
    let a = world
        .send("GET", &format!("{}/audio", path(&id)), None)
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (
            404,
            format!("Audio not found: {id} (the call was added as a transcript)").as_str()
        )
    );

    // Larger than the part the service reads and sends at a time (256 KiB).
    let recording: Vec<u8> = (0..=255u8).cycle().take(700_000).collect();
    world
        .analytics
        .service
        .state
        .objects
        .put(
            &format!("{COMPANY}/{ORG}/{FOLDER}/{id}/audio.wav"),
            recording.clone(),
        )
        .await
        .unwrap();
    assert_eq!(
        world.send("GET", &path(&id), None).await.body["audio"],
        true
    );

    let url = world.url(&format!("{}/audio", path(&id)), Some(&world.token));
    let get = |range: Option<&'static str>| {
        let mut request = reqwest::Client::new().get(&url);
        if let Some(range) = range {
            request = request.header("Range", range);
        }
        request.send()
    };
    let whole = get(None).await.unwrap();
    assert_eq!(whole.status(), 200);
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(header(&whole, "content-type").as_deref(), Some("audio/wav"));
    assert_eq!(header(&whole, "accept-ranges").as_deref(), Some("bytes"));
    assert_eq!(
        header(&whole, "x-content-type-options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(header(&whole, "content-length").as_deref(), Some("700000"));
    assert_eq!(whole.bytes().await.unwrap().as_ref(), recording.as_slice());

    let part = get(Some("bytes=200000-599999")).await.unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(
        header(&part, "content-range").as_deref(),
        Some("bytes 200000-599999/700000")
    );
    assert_eq!(header(&part, "content-length").as_deref(), Some("400000"));
    assert_eq!(
        part.bytes().await.unwrap().as_ref(),
        &recording[200_000..600_000]
    );

    let tail = get(Some("bytes=-10")).await.unwrap();
    assert_eq!(tail.status(), 206);
    assert_eq!(tail.bytes().await.unwrap().as_ref(), &recording[699_990..]);

    let past = get(Some("bytes=700000-")).await.unwrap();
    assert_eq!(past.status(), 416);
    assert_eq!(
        header(&past, "content-range").as_deref(),
        Some("bytes */700000")
    );
}

/// The answer's members besides the transcript's own are the service's: a transcript that carries
/// `folder` or `audio` of its own reads with the true ones.
async fn the_service_names_where_a_call_is(stack: Stack) {
    let world = World::with_folder(stack).await;
    let mut added: Value = transcript("refund");
    added["folder"] = json!("elsewhere");
    added["audio"] = json!(true);
    let id = world.add_call(&added).await;
    let a = world.send("GET", &path(&id), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        (&a.body["folder"], &a.body["audio"]),
        (&json!(FOLDER), &json!(false))
    );
}

crate::stack_tests!(
    a_call_reads_with_the_metadata_of_its_last_change,
    only_its_company_and_organization_find_a_call,
    a_recording_is_served_whole_and_by_range,
    the_service_names_where_a_call_is,
);
