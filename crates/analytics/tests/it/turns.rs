//! Companies take turns at the workers (docs/operations.md, Sharing the platform between companies): a
//! company that queued work first does not make another company's later work wait for all of it, and
//! a company's receiver that never answers holds only a few of the callback slots. Two companies, acme
//! and evil, on one service, on every stack (the RabbitMQ relay's windows included).

use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;

use crate::receiver::Receiver;
use crate::stack_tests;
use crate::support::{within, Stack, World};
use crate::transcription::{short_clip, Field};

/// A world with one recognizer, whose callbacks may reach loopback and give up on a post after 8 s.
async fn world(stack: Stack) -> World {
    World::with(stack, |c| {
        c.asr_workers = 1;
        c.callback_allow_loopback = true;
        c.callback_timeout_ms = 8000;
    })
    .await
}

/// A receiver that takes connections and never answers; how many it has taken.
async fn silent_receiver() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let taken = std::sync::Arc::new(AtomicUsize::new(0));
    let count = taken.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    (url, taken)
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

/// evil's receiver never answers and evil has a dozen callbacks for it; acme's callback is posted at
/// once, long before evil's posts time out, because evil's receiver holds only its few slots.
async fn a_receiver_that_never_answers_holds_only_its_own_slots(stack: Stack) {
    let world = world(stack).await;
    let evil = world.other_company("evil").await;
    let (silent, taken) = silent_receiver().await;
    for _ in 0..12 {
        // Not audio: the transcription fails at once and its error is what the callback posts.
        submit(&world, &evil, b"not audio".to_vec(), &silent).await;
    }
    let posting = within(Duration::from_secs(20), || async {
        (taken.load(std::sync::atomic::Ordering::SeqCst) >= 2).then_some(())
    })
    .await;
    assert!(posting.is_some(), "evil's posts are under way");
    let receiver = Receiver::start(0).await;
    let started = std::time::Instant::now();
    submit(&world, &world.token, b"not audio".to_vec(), &receiver.url).await;
    let posted = within(Duration::from_secs(20), || async {
        (!receiver.received().is_empty()).then_some(())
    })
    .await;
    assert!(posted.is_some(), "acme's callback was posted");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "acme's callback waited {:?} behind evil's silent receiver (posts time out after 8 s)",
        started.elapsed()
    );
    assert!(
        taken.load(std::sync::atomic::Ordering::SeqCst) <= 2,
        "evil's receiver had at most two posts at once"
    );
}

stack_tests!(
    a_company_s_recording_does_not_wait_for_another_s_queue,
    a_receiver_that_never_answers_holds_only_its_own_slots,
);
