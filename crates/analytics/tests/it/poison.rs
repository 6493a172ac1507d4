//! One company's odd input fails only its own work: what the search index would refuse is refused at
//! upload, naming the field.

use serde_json::{json, Value};

use crate::support::*;

/// An upload into `company`'s folder `main/calls` with its token.
async fn upload(world: &World, company: &str, token: &str, transcript: &Value) -> Answer {
    let form = reqwest::multipart::Form::new()
        .text("token", token.to_string())
        .part(
            "file",
            reqwest::multipart::Part::bytes(transcript.to_string().into_bytes())
                .file_name("call.json"),
        );
    let response = reqwest::Client::new()
        .post(world.url(&format!("/transcribe/{company}/main/calls"), None))
        .multipart(form)
        .send()
        .await
        .expect("upload");
    read(response).await
}

/// `company`'s organization `main` and folder `calls`, with the metadata field `queue` configured.
async fn folder_of(world: &World, company: &str, token: &str) {
    for (path, body) in [
        (format!("/config/{company}"), json!({})),
        (
            format!("/config/{company}/main"),
            json!({"timezone": "UTC"}),
        ),
        (
            format!("/config/{company}/main/calls"),
            json!({"custom_meta": ["queue"]}),
        ),
    ] {
        let a = world.send_as(Some(token), "PUT", &path, Some(body)).await;
        assert_eq!(a.status, 200, "{path}: {}", a.text);
    }
}

async fn search(world: &World, company: &str, token: &str, q: &str) -> Value {
    let path = format!("/search/{company}/main?q={q}");
    let a = world.send_as(Some(token), "GET", &path, None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body
}

fn with(mut transcript: Value, field: &str, value: Value) -> Value {
    transcript[field] = value;
    transcript
}

async fn what_the_index_would_refuse_is_refused_at_upload(stack: Stack) {
    let world = World::new(stack).await;
    let acme = world.token.clone();
    let evil = world.other_company("evil").await;
    folder_of(&world, COMPANY, &acme).await;
    folder_of(&world, "evil", &evil).await;

    for datetime in [
        "-0001-01-01T00:00:00",
        "1899-12-31T23:59:59",
        "0500-06-01T12:00:00",
        "+10000-01-01T00:00:00",
    ] {
        let bad = with(transcript("poison"), "datetime", json!(datetime));
        let a = upload(&world, "evil", &evil, &bad).await;
        assert_eq!(a.status, 400, "{datetime}: {}", a.text);
        assert!(a.text.contains("datetime"), "{datetime}: {}", a.text);
    }
    let a = upload(
        &world,
        "evil",
        &evil,
        &with(
            transcript("poison"),
            "datetime",
            json!("9999-12-31T23:00:00Z"),
        ),
    )
    .await;
    assert_eq!(a.status, 200, "the last year allowed: {}", a.text);
    for field in ["a..b", "queue.", ".queue"] {
        let bad = with(transcript("poison"), "metadata", json!({ field: "x" }));
        let a = upload(&world, "evil", &evil, &bad).await;
        assert_eq!(a.status, 400, "{field}: {}", a.text);
        assert!(a.text.contains("field name"), "{field}: {}", a.text);
    }
    // One rule for the metadata of an upload and of a PATCH.
    let many: serde_json::Map<String, Value> =
        (0..1001).map(|i| (format!("f{i}"), json!("x"))).collect();
    let a = upload(
        &world,
        "evil",
        &evil,
        &with(transcript("poison"), "metadata", Value::Object(many)),
    )
    .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("at most 1000"), "{}", a.text);

    let a = upload(&world, COMPANY, &acme, &transcript("invoice")).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let call = a.body["tId"].as_str().unwrap().to_string();
    let found = eventually(|| async {
        let hits = search(&world, COMPANY, &acme, "invoice").await;
        (hits["total"] == 1).then_some(hits)
    })
    .await;
    assert_eq!(found["hits"][0]["tId"], call.as_str(), "{found}");
}

crate::stack_tests!(what_the_index_would_refuse_is_refused_at_upload);
