//! Every endpoint refuses what the token does not allow: no token or a forged, expired-looking or revoked
//! one (401), another company's token and a token without the needed scope (403). Nothing is changed by a
//! refused request.

use serde_json::json;

use crate::support::*;

/// Every endpoint with a body it would accept from acme's own token.
fn endpoints(call: &str) -> Vec<(&'static str, String, Option<serde_json::Value>)> {
    vec![
        ("GET", format!("/config/{COMPANY}"), None),
        ("PUT", format!("/config/{COMPANY}"), Some(json!({}))),
        ("DELETE", format!("/config/{COMPANY}"), None),
        ("GET", format!("/config/{COMPANY}/{ORG}"), None),
        (
            "PUT",
            format!("/config/{COMPANY}/{ORG}"),
            Some(json!({"timezone": "UTC"})),
        ),
        ("DELETE", format!("/config/{COMPANY}/{ORG}"), None),
        ("GET", format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None),
        (
            "POST",
            format!("/config/{COMPANY}/{ORG}/other"),
            Some(json!({})),
        ),
        (
            "PUT",
            format!("/config/{COMPANY}/{ORG}/{FOLDER}"),
            Some(json!({})),
        ),
        ("DELETE", format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None),
        (
            "PATCH",
            format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!({"region": "x"})),
        ),
        (
            "DELETE",
            format!("/metadata/{COMPANY}/{ORG}/{call}"),
            Some(json!(["queue"])),
        ),
        ("GET", format!("/search/{COMPANY}/{ORG}?q=invoice"), None),
        (
            "GET",
            format!("/search/{COMPANY}/{ORG}/{FOLDER}?q=invoice"),
            None,
        ),
    ]
}

fn is_write(method: &str) -> bool {
    method != "GET"
}

async fn another_companys_token_reaches_nothing(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let before = world.stored_transcript(&call).await.unwrap();
    let stranger = world.other_company("globex").await;
    for (method, path, body) in endpoints(&call) {
        let a = world.send_as(Some(&stranger), method, &path, body).await;
        assert_eq!(a.status, 403, "{method} {path}: {}", a.text);
        assert!(a.text.contains("another company"), "{}", a.text);
    }
    let a = world
        .upload_as(
            &stranger,
            ORG,
            FOLDER,
            transcript("x").to_string().into_bytes(),
            "c.json",
            None,
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.text);
    assert_eq!(world.written_transcript(&call).await, before);
    let folder = world
        .send("GET", &format!("/config/{COMPANY}/{ORG}/{FOLDER}"), None)
        .await;
    assert_eq!(folder.body["status"], "OK", "no deletion started");
}

async fn scopes_limit_reads_and_writes(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let reader = world.token_with_scope("analytics:read").await;
    let writer = world.token_with_scope("analytics:write").await;
    let neither = world.token_with_scope("events:read").await;
    for (method, path, body) in endpoints(&call) {
        let (allowed, refused) = if is_write(method) {
            (&writer, &reader)
        } else {
            (&reader, &writer)
        };
        let a = world
            .send_as(Some(refused), method, &path, body.clone())
            .await;
        assert_eq!(a.status, 403, "{method} {path}: {}", a.text);
        assert!(a.text.contains("scope"), "{}", a.text);
        let a = world.send_as(Some(&neither), method, &path, body).await;
        assert_eq!(a.status, 403, "{method} {path}: {}", a.text);
        if !is_write(method) {
            let a = world.send_as(Some(allowed), method, &path, None).await;
            assert_eq!(a.status, 200, "{method} {path}: {}", a.text);
        }
    }
    let a = world
        .upload_as(
            &reader,
            ORG,
            FOLDER,
            transcript("x").to_string().into_bytes(),
            "c.json",
            None,
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.text);
}

async fn missing_forged_and_revoked_tokens_are_unauthenticated(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    // The signature of acme's own token, with one claim changed.
    let mut parts: Vec<String> = world.token.split('.').map(str::to_string).collect();
    parts[1] = parts[1].chars().rev().collect();
    let forged = parts.join(".");
    let revoked = world
        .token_with_scope("analytics:read analytics:write")
        .await;
    let response = reqwest::Client::new()
        .post(format!("{}/oauth/{COMPANY}/revoke", world.auth.url))
        .basic_auth(&world.client_id, Some(&world.secret))
        .form(&[("token", revoked.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    for (method, path, body) in endpoints(&call) {
        for token in [
            None,
            Some("not-a-token"),
            Some(forged.as_str()),
            Some(revoked.as_str()),
        ] {
            let a = world.send_as(token, method, &path, body.clone()).await;
            assert_eq!(a.status, 401, "{method} {path} {token:?}: {}", a.text);
            assert!(a.content_type.starts_with("text/html"));
        }
    }
    // The bearer header works as the query parameter does.
    let a = read(
        reqwest::Client::new()
            .get(world.url(&format!("/config/{COMPANY}"), None))
            .bearer_auth(&world.token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
}

crate::stack_tests!(
    another_companys_token_reaches_nothing,
    scopes_limit_reads_and_writes,
    missing_forged_and_revoked_tokens_are_unauthenticated,
);
