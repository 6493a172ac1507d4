//! Result callbacks (docs/transcription.md, Callbacks), delivered to a real receiver on loopback: posts
//! retried with doubling waits until the receiver answers 200, every attempt signed with the company's
//! callback secret under one `webhook-id`; error posts; attempts running out; and the address guard,
//! which refuses loopback, private and metadata addresses unless the operator allows them, at submission
//! and again at delivery.

use std::time::Duration;

use callbacks::sign::CallbackSecret;
use common::bus::RetryPolicy;
use messages::v1::CallbackDelivery;
use serde_json::Value;
use transcription::jobs::callback::{attempt, Attempt};

use crate::receiver::Receiver;
use crate::stack_tests;
use crate::support::{eventually, Stack, World, COMPANY};
use crate::transcription::Field;

/// A world whose callbacks may reach loopback (the receiver) and are retried quickly.
async fn world(stack: Stack) -> World {
    let world = World::with(stack, |c| {
        c.callback_allow_loopback = true;
        c.callback_first_retry_ms = 100;
        c.callback_max_wait_ms = 400;
    })
    .await;
    if let Some(servers) = &world.production {
        // The waits of these callbacks, so the test broker removes their wait queues afterwards.
        servers.broker.uses(RetryPolicy {
            max_attempts: 4,
            first_wait: Duration::from_millis(100),
            max_wait: Duration::from_millis(400),
        });
    }
    world
}

async fn delivered(world: &World, request: &str, state: &str) -> Value {
    eventually(|| async {
        let p = world
            .send("GET", &format!("/transcribe/{request}"), None)
            .await
            .body;
        (p["callback"]["state"] == state).then_some(p)
    })
    .await
}

fn secret(world: &World) -> CallbackSecret {
    CallbackSecret::of_company(&world.server_key(), COMPANY)
}

async fn a_result_is_posted_signed_until_the_receiver_takes_it(stack: Stack) {
    let world = world(stack).await;
    let receiver = Receiver::start(2).await;
    // A receiver's key in the query reaches the receiver, and no reader of the progress.
    let url = format!("{}?key=s3cr3t", receiver.url);
    let a = world
        .transcribe_clip(&[("callback", &url), ("output", "text")])
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(
        a.body.as_object().unwrap().len(),
        1,
        "only the requestid: {}",
        a.text
    );
    let request = a.body["requestid"].as_str().unwrap().to_string();

    let progress = delivered(&world, &request, "delivered").await;
    assert_eq!(progress["callback"]["attempts"], 3, "{progress}");
    assert_eq!(progress["callback"]["max_attempts"], 100, "the default");
    assert_eq!(progress["callback"]["url"], format!("{}?…", receiver.url));
    assert!(!progress.to_string().contains("s3cr3t"), "{progress}");
    let posts = receiver.received();
    assert_eq!(posts.len(), 3);
    let secret = secret(&world);
    for post in &posts {
        assert_eq!(post.path, "/hooks/speech?key=s3cr3t");
        assert_eq!(
            post.webhook_id, posts[0].webhook_id,
            "one id for every attempt"
        );
        assert!(post.webhook_id.starts_with("msg_"));
        assert!((post.webhook_timestamp - chrono::Utc::now().timestamp()).abs() < 60);
        assert!(
            secret.verify(
                &post.webhook_id,
                post.webhook_timestamp,
                &post.body,
                &post.webhook_signature
            ),
            "signed with acme's callback secret"
        );
        let other = CallbackSecret::of_company(&world.server_key(), "globex");
        assert!(!other.verify(
            &post.webhook_id,
            post.webhook_timestamp,
            &post.body,
            &post.webhook_signature
        ));
        assert!(post
            .content_type
            .starts_with("multipart/form-data; boundary="));
        assert_eq!(post.field("requestid").as_deref(), Some(request.as_str()));
        let (_, file_name, content_type, text) = post
            .fields()
            .into_iter()
            .find(|(name, ..)| name == "file")
            .expect("a file part");
        assert_eq!(file_name, Some(format!("{request}.txt")));
        assert_eq!(content_type.as_deref(), Some("text/plain; charset=utf-8"));
        assert!(String::from_utf8(text).unwrap().contains("young"));
    }
    // The waits grew: 100 ms, then 200 ms.
    let gap = |i: usize| posts[i + 1].webhook_timestamp - posts[i].webhook_timestamp;
    assert!(gap(0) <= gap(1) + 1);
    // A body altered in transit does not verify.
    let mut forged = posts[2].body.clone();
    let at = forged.len() - 10;
    forged[at] ^= 1;
    assert!(!secret.verify(
        &posts[2].webhook_id,
        posts[2].webhook_timestamp,
        &forged,
        &posts[2].webhook_signature
    ));
}

async fn a_failed_transcription_posts_its_error(stack: Stack) {
    let world = world(stack).await;
    let receiver = Receiver::start(0).await;
    let a = world
        .transcribe_form(
            "/transcribe",
            vec![
                Field::File("notes.wav", b"not audio".to_vec()),
                Field::Text("callback", &receiver.url),
            ],
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let request = a.body["requestid"].as_str().unwrap().to_string();
    let progress = delivered(&world, &request, "delivered").await;
    assert_eq!(progress["status"], "failed");
    let posts = receiver.received();
    assert_eq!(posts.len(), 1);
    assert_eq!(
        posts[0].field("requestid").as_deref(),
        Some(request.as_str())
    );
    let error = posts[0].field("error").expect("an error field");
    assert_eq!(Some(error.as_str()), progress["error"].as_str());
    assert!(posts[0].fields().iter().all(|(name, ..)| name != "file"));
}

async fn a_callback_is_cancelled_when_its_attempts_run_out(stack: Stack) {
    let world = world(stack).await;
    let receiver = Receiver::start(usize::MAX).await;
    let a = world
        .transcribe_clip(&[("callback", &receiver.url), ("attempts", "3")])
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let request = a.body["requestid"].as_str().unwrap().to_string();
    let progress = delivered(&world, &request, "cancelled").await;
    assert_eq!(progress["callback"]["attempts"], 3);
    assert_eq!(progress["callback"]["max_attempts"], 3);
    assert!(
        progress["callback"]["last_error"]
            .as_str()
            .unwrap()
            .contains("503"),
        "{progress}"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(receiver.received().len(), 3, "no attempt after the last");
    // The transcript itself is kept and can be read.
    let result = world
        .send("GET", &format!("/transcribe/{request}/result"), None)
        .await;
    assert_eq!(result.status, 200);
}

async fn internal_addresses_are_refused_unless_allowed(stack: Stack) {
    let strict = World::new(stack).await;
    let receiver = Receiver::start(0).await;
    let localhost = receiver.url.replace("127.0.0.1", "localhost");
    for (url, why) in [
        (receiver.url.as_str(), "loopback"),
        (localhost.as_str(), "loopback"),
        ("http://[::1]:9/x", "loopback"),
        ("http://10.1.2.3/x", "private"),
        ("http://192.168.0.10/x", "private"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "not a unicast internet address",
        ),
        ("http://0x7f000001/x", "loopback"),
        ("ftp://example.com/x", "http or https"),
        ("https://user:pw@example.com/x", "user name or password"),
    ] {
        let a = strict.transcribe_clip(&[("callback", url)]).await;
        assert_eq!(a.status, 400, "{url}: {}", a.text);
        assert!(a.text.contains(why), "{url}: {}", a.text);
    }
    assert!(receiver.received().is_empty());
    // An attempts field without a callback is a mistake, not ignored.
    let a = strict.transcribe_clip(&[("attempts", "5")]).await;
    assert_eq!(a.status, 400, "{}", a.text);

    // Private ranges stay refused when only loopback is allowed.
    let loopback_only = world(stack).await;
    let a = loopback_only
        .transcribe_clip(&[("callback", "http://10.0.0.8/x")])
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
}

async fn the_address_is_checked_again_when_posting(stack: Stack) {
    // A delivery queued while loopback was allowed (or a name that resolved elsewhere then) is refused
    // by a worker that does not allow it: the receiver never sees the post.
    let strict = World::new(stack).await;
    let receiver = Receiver::start(0).await;
    let state = &strict.analytics.service.transcription;
    for url in [
        receiver.url.clone(),
        receiver.url.replace("127.0.0.1", "localhost"),
    ] {
        let job = CallbackDelivery {
            delivery_id: "msg_test".into(),
            company: COMPANY.into(),
            url: url.clone(),
            body: b"--b--\r\n".to_vec(),
            content_type: "multipart/form-data; boundary=b".into(),
            request_id: uuid::Uuid::new_v4().to_string(),
            max_attempts: 1,
        };
        match attempt(state, &job).await {
            Attempt::Failed(why) => assert!(why.contains("loopback"), "{url}: {why}"),
            other => panic!("{url}: {other:?}"),
        }
    }
    assert!(receiver.received().is_empty());
}

stack_tests!(
    a_result_is_posted_signed_until_the_receiver_takes_it,
    a_failed_transcription_posts_its_error,
    a_callback_is_cancelled_when_its_attempts_run_out,
    internal_addresses_are_refused_unless_allowed,
    the_address_is_checked_again_when_posting,
);
