//! Companies take turns at the workers (docs/operations.md, Sharing the platform between companies): a
//! company that queued work first does not make another company's later work wait for all of it. Two
//! companies, acme and evil, on one service, on every stack (the RabbitMQ relay's windows included).

use std::time::Duration;

use serde_json::Value;

use crate::receiver::Receiver;
use crate::stack_tests;
use crate::support::{within, Stack, World};
use crate::transcription::{short_clip, Field};

/// A world with one recognizer, whose callbacks may reach loopback.
async fn world(stack: Stack) -> World {
    World::with(stack, |c| {
        c.asr_workers = 1;
        c.callback_allow_loopback = true;
    })
    .await
}

/// Submits a transcription of `file` as `token`'s company with a callback to `url`; its request id.
async fn submit(world: &World, token: &str, file: Vec<u8>, url: &str) -> String {
    let fields = vec![Field::File("call.wav", file), Field::Text("callback", url)];
    let a = world.transcribe_form_as(token, "/transcribe", fields).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body["requestid"].as_str().unwrap().to_string()
}

async fn progress(world: &World, token: &str, request: &str) -> Value {
    let a = world
        .send_as(Some(token), "GET", &format!("/transcribe/{request}"), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body
}

fn ended(progress: &Value) -> bool {
    matches!(progress["status"].as_str(), Some("done" | "failed"))
}

/// evil queues four recordings, then acme one: with one recognizer, acme's is transcribed after at
/// most the one evil's already under way and the one waiting at the broker, not after all four.
async fn a_company_s_recording_does_not_wait_for_another_s_queue(stack: Stack) {
    let world = world(stack).await;
    let evil = world.other_company("evil").await;
    let receiver = Receiver::start(0).await;
    let mut evils = Vec::new();
    for _ in 0..4 {
        evils.push(submit(&world, &evil, short_clip(), &receiver.url).await);
    }
    let acme = submit(&world, &world.token, short_clip(), &receiver.url).await;
    let metrics = world.send("GET", "/metrics", None).await.text;
    assert!(
        metrics.lines().any(|l| l.starts_with("bus_waiting{")
            && l.contains("analytics.transcribe")
            && l.contains("company=\"evil\"")),
        "the operator sees whose recordings wait: {metrics}"
    );
    let done = within(Duration::from_secs(120), || async {
        ended(&progress(&world, &world.token, &acme).await).then_some(())
    })
    .await;
    assert!(done.is_some(), "acme's recording was transcribed");
    let mut waiting = 0;
    for request in &evils {
        if !ended(&progress(&world, &evil, request).await) {
            waiting += 1;
        }
    }
    assert!(
        waiting >= 2,
        "acme's recording waited for {} of evil's four",
        4 - waiting
    );
}

stack_tests!(a_company_s_recording_does_not_wait_for_another_s_queue,);
