//! Search over the calls' text and their folders' configured metadata fields: uploads and metadata
//! changes reach the index through the bus; results are scoped to the path's organization or folder,
//! filtered by configured fields, paged, and carry a snippet with the matched words marked.

use serde_json::json;

use crate::support::*;

async fn uploads_and_metadata_changes_become_searchable(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    world.add_call(&transcript("parcel")).await;

    let found = world.search_until("q=Invoice", |b| b["total"] == 1).await;
    let hit = &found["hits"][0];
    assert_eq!(hit["tId"], call.as_str());
    assert_eq!(hit["folder"], FOLDER);
    assert_eq!(hit["datetime"], "2026-11-20T10:15:00");
    assert!(
        hit["snippet"]
            .as_str()
            .unwrap()
            .contains("<em>invoice</em>"),
        "{hit}"
    );
    assert_eq!(
        hit["metadata"],
        json!({"queue": "billing"}),
        "configured fields only"
    );

    // A changed configured field is searchable once its reindex has run; an unconfigured one never is.
    let a = world
        .send(
            "PATCH",
            &format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!({"region": "north", "colour": "mauve"})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let found = world
        .search_until("filter=region:north", |b| b["total"] == 1)
        .await;
    assert_eq!(found["hits"][0]["tId"], call.as_str());
    let none = world
        .send("GET", &format!("/search/{COMPANY}/{ORG}?q=mauve"), None)
        .await;
    assert_eq!(none.body["total"], 0);
    world.search_until("q=north", |b| b["total"] == 1).await;

    let a = world
        .send(
            "DELETE",
            &format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!(["region"])),
        )
        .await;
    assert_eq!(a.status, 200);
    world
        .search_until("filter=region:north", |b| b["total"] == 0)
        .await;
}

/// A field the folder stops configuring leaves the database and the index with the change: its values
/// are neither found by a filter or a search nor shown in the hits; the fields still configured stay.
async fn a_field_no_longer_configured_is_no_longer_searchable(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let a = world
        .send(
            "PATCH",
            &format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!({"queue": "vip", "region": "north"})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    world
        .search_until("filter=queue:vip", |b| b["total"] == 1)
        .await;
    let a = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}/{FOLDER}"),
            Some(json!({"custom_meta": ["region"]})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let rows = analytics_store::metadata(&world.analytics.service.state.db, &call)
        .await
        .unwrap();
    assert_eq!(rows, [("region".to_string(), "north".to_string())]);
    world
        .search_until("filter=queue:vip", |b| b["total"] == 0)
        .await;
    let none = world
        .send("GET", &format!("/search/{COMPANY}/{ORG}?q=vip"), None)
        .await;
    assert_eq!(none.body["total"], 0, "{}", none.text);
    let kept = world
        .search_until("filter=region:north", |b| b["total"] == 1)
        .await;
    assert_eq!(kept["hits"][0]["metadata"], json!({"region": "north"}));
}

async fn results_are_scoped_filtered_and_paged(stack: Stack) {
    let world = World::with_folder(stack).await;
    world
        .create_folder(ORG, "outbox", json!({"custom_meta": ["queue"]}))
        .await;
    world
        .create_folder("sales", FOLDER, json!({"custom_meta": ["queue"]}))
        .await;
    for day in 1..=5 {
        let mut t = transcript("invoice");
        t["datetime"] = json!(format!("2026-11-0{day}T09:00:00"));
        world.add_call(&t).await;
    }
    let mut sales = transcript("invoice");
    sales["metadata"]["queue"] = json!("sales");
    assert_eq!(
        world.upload_to(ORG, "outbox", &sales, None).await.status,
        200
    );
    assert_eq!(
        world
            .upload_to("sales", FOLDER, &transcript("invoice"), None)
            .await
            .status,
        200
    );

    let all = world.search_until("q=invoice", |b| b["total"] == 6).await;
    assert_eq!(
        all["hits"].as_array().unwrap().len(),
        6,
        "the other organization's call is not here"
    );
    let folder = world
        .send(
            "GET",
            &format!("/search/{COMPANY}/{ORG}/outbox?q=invoice"),
            None,
        )
        .await;
    assert_eq!(folder.body["total"], 1);
    let filtered = world
        .send(
            "GET",
            &format!("/search/{COMPANY}/{ORG}?q=invoice&filter=queue:sales"),
            None,
        )
        .await;
    assert_eq!(filtered.body["total"], 1);
    assert_eq!(filtered.body["hits"][0]["folder"], "outbox");

    // Without q: every call of the folder, newest first, in pages.
    let first = world
        .send(
            "GET",
            &format!("/search/{COMPANY}/{ORG}/{FOLDER}?limit=2"),
            None,
        )
        .await;
    assert_eq!(first.body["total"], 5);
    let dates: Vec<&str> = first.body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["datetime"].as_str().unwrap())
        .collect();
    assert_eq!(dates, ["2026-11-05T09:00:00", "2026-11-04T09:00:00"]);
    let third = world
        .send(
            "GET",
            &format!("/search/{COMPANY}/{ORG}/{FOLDER}?limit=2&offset=4"),
            None,
        )
        .await;
    assert_eq!(third.body["hits"][0]["datetime"], "2026-11-01T09:00:00");
}

async fn bad_search_parameters_are_refused(stack: Stack) {
    let world = World::with_folder(stack).await;
    for (query, says) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("offset=-1", "offset"),
        ("filter=queue", "filter"),
        ("filter=tId:x", "reserved"),
        ("q=a&q=b", "twice"),
        ("sort=date", "unknown query parameter"),
    ] {
        let a = world
            .send("GET", &format!("/search/{COMPANY}/{ORG}?{query}"), None)
            .await;
        assert_eq!(a.status, 400, "{query}: {}", a.text);
        assert!(a.text.contains(says), "{query}: {}", a.text);
    }
    for hostile in ["%22", "AND%20OR", "*", "(", "queue:billing", "%F0%9F%93%9E"] {
        let a = world
            .send("GET", &format!("/search/{COMPANY}/{ORG}?q={hostile}"), None)
            .await;
        assert_eq!(a.status, 200, "{hostile}: {}", a.text);
    }
    let a = world
        .send("GET", &format!("/search/{COMPANY}/nowhere?q=x"), None)
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, "Folder not found: nowhere")
    );
}

crate::stack_tests!(
    uploads_and_metadata_changes_become_searchable,
    a_field_no_longer_configured_is_no_longer_searchable,
    results_are_scoped_filtered_and_paged,
    bad_search_parameters_are_refused,
);
