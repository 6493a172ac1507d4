//! What the service does when its dependencies fail: a poison message is set aside as a dead letter and
//! the workers go on; on the production adapters, calls added while RabbitMQ is away (its connections cut
//! and refused, as in a broker restart) are all indexed once it is back, and an upload while the object
//! store is away is refused with 503 and stores nothing. `/readyz` names the failing dependency meanwhile.

use std::time::Duration;

use common::bus::Message;
use serde_json::{json, Value};

use crate::support::*;

const POISON: &[u8] = b"\xff\x00 not a reindex message";

async fn a_poison_message_becomes_a_dead_letter_and_work_goes_on(stack: Stack) {
    let world = World::with_folder(stack).await;
    let state = world.analytics.service.state.clone();
    let mut tx = state.db.begin().await.unwrap();
    state
        .bus
        .publish(
            &mut tx,
            &Message::new(messages::topics::REINDEX, POISON.to_vec()),
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let call = world.add_call(&transcript("invoice")).await;

    let found = world.search_until("q=invoice", |b| b["total"] == 1).await;
    assert_eq!(found["hits"][0]["tId"], call.as_str());
    let dead = eventually(|| async {
        let dead = state
            .bus
            .dead_letters(messages::topics::REINDEX, 10)
            .await
            .unwrap();
        (!dead.is_empty()).then_some(dead)
    })
    .await;
    assert_eq!(dead.len(), 1, "only the poison message: {dead:?}");
    assert_eq!(dead[0].message.body, POISON);
    assert_eq!(dead[0].attempts, 1, "set aside at once, not retried");
}

crate::stack_tests!(a_poison_message_becomes_a_dead_letter_and_work_goes_on);

async fn readyz(world: &World) -> (u16, Value) {
    let a = world.send_as(None, "GET", "/readyz", None).await;
    (a.status, a.body["checks"].clone())
}

/// The faults only the production adapters have (a broker, an object store over the network).
mod on_production_only {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_added_while_rabbitmq_restarts_are_all_indexed() {
        let world = World::with_folder(Stack::Production).await;
        let (status, checks) = readyz(&world).await;
        assert_eq!(status, 200, "{checks}");
        assert_eq!(checks["bus"], "ok");

        let add = |i: usize| {
            let world = &world;
            async move {
                let mut t = transcript("invoice");
                t["filename"] = json!(format!("call-{i}.wav"));
                world.add_call(&t).await
            }
        };
        let mut added = Vec::new();
        for i in 0..10 {
            added.push(add(i).await);
        }
        world.servers().broker_proxy.set_up(false);
        // Accepted while the broker is away: the reindex messages wait in the outbox.
        for i in 10..40 {
            added.push(add(i).await);
        }
        let (status, checks) = readyz(&world).await;
        assert_eq!(status, 503, "{checks}");
        assert_eq!(checks["bus"], "failing");
        assert_eq!(checks["database"], "ok");

        world.servers().broker_proxy.set_up(true);
        for i in 40..50 {
            added.push(add(i).await);
        }
        // What is asserted is that nothing is lost, not how fast it comes back: the relay and the consumers
        // reconnect after waits of up to 2 s (more when a confirm was cut off, up to the 10 s timeout), and
        // the index then takes a share of a machine the other tests load too.
        let found = world
            .search_within(Duration::from_secs(90), "q=invoice&limit=100", |b| {
                b["total"] == 50
            })
            .await;
        let mut ids: Vec<&str> = found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["tId"].as_str().unwrap())
            .collect();
        ids.sort();
        added.sort();
        assert_eq!(ids, added, "every call accepted is indexed, once");
        let (status, checks) = readyz(&world).await;
        assert_eq!(status, 200, "{checks}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_upload_while_the_object_store_is_away_is_refused_and_stores_nothing() {
        let mut world = World::with_folder(Stack::Production).await;
        let kept = world.add_call(&transcript("invoice")).await;
        world.production.as_mut().unwrap().s3.stop();

        let a = world
            .upload_to(ORG, FOLDER, &transcript("parcel"), None)
            .await;
        assert_eq!(a.status, 503, "{}", a.text);
        assert_eq!(a.text, "Service unavailable, try again later");
        assert!(
            !a.text.contains(&world.servers().s3.endpoint),
            "no detail of the dependency is sent"
        );
        let (status, checks) = readyz(&world).await;
        assert_eq!(status, 503, "{checks}");
        assert_eq!(checks["object_store"], "failing");

        world.production.as_mut().unwrap().s3.restart();
        let a = world
            .send("GET", &format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None)
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
        let found = world.search_until("q=invoice", |b| b["total"] == 1).await;
        assert_eq!(found["hits"][0]["tId"], kept.as_str());
        let parcel = world
            .search_until("q=parcel", |b| b["total"].is_number())
            .await;
        assert_eq!(parcel["total"], 0, "the refused upload left no call");
        assert!(world.stored_transcript(&kept).await.is_some());
        assert_eq!(readyz(&world).await.0, 200);
    }
}

/// Settings that name no usable recognizer make building the service fail with the reason, rather
/// than panic: an embedding program (speechd, a test) gets an error it can report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recognizer_that_cannot_be_built_is_an_error_not_a_panic() {
    let world = World::new(Stack::Embedded(Backend::Sqlite)).await;
    let state = &world.analytics.service.state;
    let mut config = state.config.clone();
    config.asr_engine = speech::AsrEngine::Http;
    config.asr_url = None;
    let ports = analytics::Ports {
        bus: state.bus.clone(),
        objects: state.objects.clone(),
        search: state.search.clone(),
    };
    let Err(error) = analytics::AnalyticsService::with_ports(config, state.db.clone(), ports)
    else {
        panic!("a service without a recognizer");
    };
    assert!(error.to_string().contains("asr_url"), "{error}");
}
