//! `/callbacks/{company}/secret` (docs/transcription.md, Signatures): reading and rotating a company's
//! callback secret, posts signed with the new secret and, for the overlap, the replaced one, and who may
//! do either: only the company's own tokens with `analytics:write`, each rotation counted once however
//! many run at once.

use callbacks::sign::CallbackSecret;
use messages::v1::CallbackDelivery;
use serde_json::{json, Value};
use transcription::jobs::callback::{attempt, Attempt};

use crate::receiver::{Received, Receiver};
use crate::stack_tests;
use crate::support::{eventually, Stack, World, COMPANY, FOLDER, ORG};

const PATH: &str = "/callbacks/acme/secret";

/// A world whose callbacks may reach loopback (the receiver), its replaced secrets signing for
/// `overlap_s`.
async fn world(stack: Stack, overlap_s: u64) -> World {
    World::with(stack, |c| {
        c.callback_allow_loopback = true;
        c.callback_secret_overlap_s = overlap_s;
    })
    .await
}

fn parse(record: &Value) -> CallbackSecret {
    CallbackSecret::parse(record["callback_secret"].as_str().expect("a secret")).expect("whsec_")
}

/// One attempt of a delivery to the receiver, as the callback worker makes it; the post it got.
async fn post(world: &World, receiver: &Receiver, id: &str) -> Received {
    let before = receiver.received().len();
    let job = CallbackDelivery {
        delivery_id: id.into(),
        company: COMPANY.into(),
        url: receiver.url.clone(),
        body: b"--b\r\nContent-Disposition: form-data; name=\"requestid\"\r\n\r\nr1\r\n--b--\r\n"
            .to_vec(),
        content_type: "multipart/form-data; boundary=b".into(),
        request_id: uuid::Uuid::new_v4().to_string(),
        max_attempts: 1,
    };
    let outcome = attempt(&world.analytics.service.transcription, &job).await;
    assert!(matches!(outcome, Attempt::Delivered(200)), "{outcome:?}");
    let posts = receiver.received();
    assert_eq!(posts.len(), before + 1);
    posts.last().unwrap().clone()
}

fn verifies(secret: &CallbackSecret, post: &Received) -> bool {
    secret.verify(
        &post.webhook_id,
        post.webhook_timestamp,
        &post.body,
        &post.webhook_signature,
    )
}

async fn a_rotated_secret_signs_beside_the_one_it_replaced_for_the_overlap(stack: Stack) {
    let world = world(stack, 86_400).await;
    let receiver = Receiver::start(0).await;
    let key = world.server_key();

    // Before any rotation: the secret bootstrap prints, derived from the server key and the company.
    let first = world.send("GET", PATH, None).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body["generation"], 0);
    assert_eq!(first.body["rotated"], Value::Null);
    assert_eq!(first.body["previous_signs_until"], Value::Null);
    let original = parse(&first.body);
    assert_eq!(
        original.to_text(),
        CallbackSecret::of_company(&key, COMPANY).to_text()
    );
    let before = post(&world, &receiver, "msg_before").await;
    assert!(verifies(&original, &before));
    assert_eq!(before.webhook_signature.split(' ').count(), 1);

    // Rotated: a new secret, and the old one still signs for a day.
    let rotated = world.send("POST", PATH, None).await;
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    assert_eq!(rotated.body["generation"], 1);
    let second = parse(&rotated.body);
    assert_ne!(second.to_text(), original.to_text());
    let rotated_at =
        chrono::DateTime::parse_from_rfc3339(rotated.body["rotated"].as_str().unwrap()).unwrap();
    let until = chrono::DateTime::parse_from_rfc3339(
        rotated.body["previous_signs_until"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(until - rotated_at, chrono::Duration::days(1));
    assert!((chrono::Utc::now() - rotated_at.with_timezone(&chrono::Utc)).num_seconds() < 60);
    let read = world.send("GET", PATH, None).await;
    assert_eq!(
        read.body, rotated.body,
        "a read gives what the rotation answered"
    );

    let during = post(&world, &receiver, "msg_during").await;
    assert_eq!(during.webhook_signature.split(' ').count(), 2);
    assert!(verifies(&second, &during), "the new secret verifies");
    assert!(
        verifies(&original, &during),
        "and the replaced one still does"
    );

    // Rotated again: the secret two back stops at once.
    let third = world.send("POST", PATH, None).await;
    assert_eq!(third.body["generation"], 2);
    let third_secret = parse(&third.body);
    let after = post(&world, &receiver, "msg_after").await;
    assert!(verifies(&third_secret, &after));
    assert!(verifies(&second, &after));
    assert!(!verifies(&original, &after), "a secret two rotations back");
    // Each generation is the server key's, so every replica signs alike.
    assert_eq!(
        third_secret.to_text(),
        CallbackSecret::of_generation(&key, COMPANY, 2).to_text()
    );
}

async fn without_an_overlap_the_replaced_secret_stops_at_once(stack: Stack) {
    let world = world(stack, 0).await;
    let receiver = Receiver::start(0).await;
    let original = parse(&world.send("GET", PATH, None).await.body);
    let rotated = world.send("POST", PATH, None).await;
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    assert_eq!(rotated.body["previous_signs_until"], Value::Null);
    let new = parse(&rotated.body);
    let posted = post(&world, &receiver, "msg_1").await;
    assert_eq!(posted.webhook_signature.split(' ').count(), 1);
    assert!(verifies(&new, &posted));
    assert!(!verifies(&original, &posted));
}

async fn only_the_company_with_the_write_scope_reads_or_rotates_its_secret(stack: Stack) {
    let world = world(stack, 86_400).await;
    let original = world.send("GET", PATH, None).await.body;

    // Never cached on the way.
    let answer = reqwest::Client::new()
        .get(world.url(PATH, None))
        .bearer_auth(&world.token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["cache-control"], "no-store");

    // Another company's token, a read-only token, none, a forged one: refused, and nothing rotated.
    let globex = world.other_company("globex").await;
    let reader = world.token_with_scope("analytics:read").await;
    let forged = {
        let mut parts: Vec<String> = world.token.split('.').map(str::to_string).collect();
        parts[2] = parts[2].chars().rev().collect();
        parts.join(".")
    };
    for method in ["GET", "POST"] {
        let a = world.send_as(Some(&globex), method, PATH, None).await;
        assert_eq!(a.status, 403, "{method} with globex's token: {}", a.text);
        assert!(!a.text.contains("whsec_"));
        let a = world.send_as(Some(&reader), method, PATH, None).await;
        assert_eq!(
            a.status, 403,
            "{method} with analytics:read only: {}",
            a.text
        );
        assert!(a.text.contains("analytics:write"), "{}", a.text);
        let a = world.send_as(None, method, PATH, None).await;
        assert_eq!(a.status, 401, "{method} without a token");
        let a = world.send_as(Some(&forged), method, PATH, None).await;
        assert_eq!(a.status, 401, "{method} with a forged token");
    }
    assert_eq!(world.send("GET", PATH, None).await.body, original);

    // Globex's own secret is not acme's, and rotating it leaves acme's alone.
    let theirs = world
        .send_as(Some(&globex), "POST", "/callbacks/globex/secret", None)
        .await;
    assert_eq!(theirs.status, 200, "{}", theirs.text);
    assert_ne!(theirs.body["callback_secret"], original["callback_secret"]);
    assert_eq!(world.send("GET", PATH, None).await.body, original);

    // A burst of rotations: each gets a generation of its own, none is lost.
    let rotations = (0..8).map(|_| world.send("POST", PATH, None));
    let answers = futures_util::future::join_all(rotations).await;
    let mut generations: Vec<i64> = answers
        .iter()
        .map(|a| {
            assert_eq!(a.status, 200, "{}", a.text);
            a.body["generation"].as_i64().unwrap()
        })
        .collect();
    generations.sort_unstable();
    assert_eq!(generations, (1..=8).collect::<Vec<i64>>());
    assert_eq!(world.send("GET", PATH, None).await.body["generation"], 8);
}

async fn a_company_made_again_under_a_deleted_name_signs_with_a_new_secret(stack: Stack) {
    let world = world(stack, 86_400).await;
    world.create_folder(ORG, FOLDER, json!({})).await;
    let original = parse(&world.send("GET", PATH, None).await.body);
    let rotated = world.send("POST", PATH, None).await;
    assert_eq!(rotated.body["generation"], 1);
    let old = parse(&rotated.body);

    let a = world.send("DELETE", "/config/acme", None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    eventually(|| async {
        let a = world.send("GET", "/config/acme", None).await;
        (a.status == 404).then_some(())
    })
    .await;
    world.create_folder(ORG, FOLDER, json!({})).await;

    // Neither the secret it had nor the one before signs for the new company, not even for the overlap.
    let after = world.send("GET", PATH, None).await;
    assert_eq!(after.body["generation"], 2, "{}", after.text);
    assert_eq!(after.body["previous_signs_until"], Value::Null);
    let new = parse(&after.body);
    assert_ne!(new.to_text(), old.to_text());
    let receiver = Receiver::start(0).await;
    let posted = post(&world, &receiver, "msg_1").await;
    assert_eq!(posted.webhook_signature.split(' ').count(), 1);
    assert!(verifies(&new, &posted));
    assert!(!verifies(&old, &posted));
    assert!(!verifies(&original, &posted));
}

stack_tests!(
    a_company_made_again_under_a_deleted_name_signs_with_a_new_secret,
    a_rotated_secret_signs_beside_the_one_it_replaced_for_the_overlap,
    without_an_overlap_the_replaced_secret_stops_at_once,
    only_the_company_with_the_write_scope_reads_or_rotates_its_secret,
);
