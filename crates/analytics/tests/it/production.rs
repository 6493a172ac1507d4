//! The same rules on the production adapters: PostgreSQL, RabbitMQ (the outbox relayed to the broker,
//! workers consuming from it) and Meilisearch. Each test says so and passes when no Meilisearch binary is
//! found (`MEILI_BIN`, `PATH`, `shared/bin/meilisearch`).

use serde_json::json;

use crate::support::*;

async fn with_folder() -> Option<World> {
    let world = World::production().await?;
    world
        .create_folder(ORG, FOLDER, json!({"custom_meta": ["queue", "region"]}))
        .await;
    Some(world)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_reach_search_through_rabbitmq_and_meilisearch() {
    let Some(world) = with_folder().await else {
        return;
    };
    let call = world.add_call(&transcript("invoice")).await;
    world.add_call(&transcript("parcel")).await;
    let found = world.search_until("q=invoice", |b| b["total"] == 1).await;
    assert_eq!(found["hits"][0]["tId"], call.as_str());
    assert!(
        found["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<em>invoice</em>"),
        "{found}"
    );

    let a = world
        .send(
            "PATCH",
            &format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!({"region": "north"})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let found = world
        .search_until("filter=region:north", |b| b["total"] == 1)
        .await;
    assert_eq!(
        found["hits"][0]["metadata"],
        json!({"queue": "billing", "region": "north"})
    );
    let stranger = world.other_company("globex").await;
    let a = world
        .send_as(
            Some(&stranger),
            "GET",
            &format!("/search/{COMPANY}/{ORG}?q=invoice"),
            None,
        )
        .await;
    assert_eq!(a.status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_patches_and_a_deletion_on_the_production_adapters() {
    let Some(world) = with_folder().await else {
        return;
    };
    let call = world.add_call(&transcript("invoice")).await;
    let requests = (0..50).map(|i| {
        let world = &world;
        let path = format!("/metadata/{COMPANY}/{ORG}/{call}");
        async move {
            let mut body = serde_json::Map::new();
            body.insert(format!("key{i:02}"), json!(i.to_string()));
            let a = world
                .send("PATCH", &path, Some(serde_json::Value::Object(body)))
                .await;
            assert_eq!(a.status, 200, "{}", a.text);
        }
    });
    futures_util::future::join_all(requests).await;
    let stored = world.stored_transcript(&call).await.unwrap();
    assert_eq!(
        stored["metadata"].as_object().unwrap().len(),
        52,
        "{stored}"
    );

    world.search_until("q=invoice", |b| b["total"] == 1).await;
    let path = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    assert_eq!(world.send("DELETE", &path, None).await.status, 200);
    let gone = eventually(|| async {
        let a = world.send("GET", &path, None).await;
        (a.status == 404).then_some(a)
    })
    .await;
    assert_eq!(gone.text, "Folder not found: inbox");
    world.search_until("q=invoice", |b| b["total"] == 0).await;
}
