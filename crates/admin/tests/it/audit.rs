//! The audit log: every change, with who, when and what changed; never a secret; paged and filtered;
//! readable only with View Audit Log.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::support::*;

fn entries(page: &Value) -> Vec<Value> {
    page["items"].as_array().unwrap().clone()
}

async fn every_change_is_recorded_with_who_when_and_what(backend: Backend) {
    let w = World::new(backend).await;
    let started = chrono::Utc::now() - chrono::Duration::seconds(5);

    let mut body = user_body("eve");
    body["password"] = json!("eve's secret password");
    w.create_user(body).await;
    let eve = w.get("/users/eve").await;
    let mut record = eve.body.clone();
    record["first_name"] = json!("Evelyn");
    record["login_blocked"] = json!(true);
    let replaced = w.put("/users/eve", record, &eve.etag()).await;
    assert_eq!(replaced.status, 200);
    assert_eq!(w.delete("/users/eve", &replaced.etag()).await.status, 204);

    let role = w.post("/roles", json!({"name": "Ops"})).await;
    let ops = w
        .put(
            "/roles/Ops",
            json!({"permissions": ["Manage Clients"]}),
            &role.etag(),
        )
        .await;
    assert_eq!(ops.status, 200);
    assert_eq!(w.delete("/roles/Ops", &ops.etag()).await.status, 204);

    let client = w
        .post(
            "/clients",
            json!({"name": "c1", "grant_types": ["client_credentials"]}),
        )
        .await;
    let id = client.body["client_id"].as_str().unwrap().to_string();
    let first_secret = client.body["client_secret"].as_str().unwrap().to_string();
    let mut settings = w.get(&format!("/clients/{id}")).await.body;
    settings["name"] = json!("c1 renamed");
    let c = w
        .put(&format!("/clients/{id}"), settings, &client.etag())
        .await;
    assert_eq!(c.status, 200);
    let rotated = call(
        &w.admin,
        "POST",
        &format!("/clients/{id}/secret"),
        Some(&w.token),
        None,
        Some(&c.etag()),
    )
    .await;
    let second_secret = rotated.body["client_secret"].as_str().unwrap().to_string();
    assert_eq!(
        w.delete(&format!("/clients/{id}"), &rotated.etag())
            .await
            .status,
        204
    );

    // Refused writes leave no entry.
    assert_eq!(
        w.post("/roles", json!({"name": "bad\"name"})).await.status,
        400
    );
    assert_eq!(
        w.put("/roles/Administrator", json!({}), "W/\"9\"")
            .await
            .status,
        412
    );

    let log = w.get("/audit?limit=100").await;
    assert_eq!(log.status, 200, "{:?}", log.body);
    let all = entries(&log.body);
    let summary: Vec<(String, String, String)> = all
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["resource_type"].as_str().unwrap().to_string(),
                e["resource_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        ("delete", "client", id.as_str()),
        ("rotate_secret", "client", id.as_str()),
        ("replace", "client", id.as_str()),
        ("create", "client", id.as_str()),
        ("delete", "role", "Ops"),
        ("replace", "role", "Ops"),
        ("create", "role", "Ops"),
        ("delete", "user", "eve"),
        ("replace", "user", "eve"),
        ("create", "user", "eve"),
    ]
    .iter()
    .map(|(a, t, r)| (a.to_string(), t.to_string(), r.to_string()))
    .collect();
    assert_eq!(summary, expected, "newest first");

    for e in &all {
        assert_eq!(e["actor"], ROOT);
        assert!(e["actor_id"].is_string());
        let at = chrono::DateTime::parse_from_rfc3339(e["at"].as_str().unwrap()).unwrap();
        assert!(at > started);
    }
    let user_replace = &all[8]["changes"];
    assert_eq!(
        user_replace["first_name"],
        json!({"from": "First", "to": "Evelyn"})
    );
    assert_eq!(
        user_replace["login_blocked"],
        json!({"from": false, "to": true})
    );
    assert!(user_replace.get("last_name").is_none(), "only what changed");
    assert_eq!(all[9]["changes"]["password"], json!({"to": "(changed)"}));
    assert_eq!(all[9]["version"], 1);
    assert!(all[7]["version"].is_null());
    assert_eq!(all[7]["changes"]["username"], json!({"from": "eve"}));
    assert_eq!(
        all[5]["changes"]["permissions"],
        json!({"from": [], "to": ["Manage Clients"]})
    );
    assert_eq!(
        all[2]["changes"]["name"],
        json!({"from": "c1", "to": "c1 renamed"})
    );
    let text = log.body.to_string();
    for secret in [
        first_secret.as_str(),
        second_secret.as_str(),
        "eve's secret password",
    ] {
        assert!(!text.contains(secret), "the audit log never holds secrets");
    }
    assert!(!text.contains("argon2"));

    // Paging and filters.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/audit?limit=3&cursor={c}"),
            None => "/audit?limit=3".into(),
        };
        let page = w.get(&path).await;
        seen.extend(entries(&page.body).into_iter().map(|e| e["id"].clone()));
        match page.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.into()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 10);
    assert_eq!(
        seen.iter()
            .map(|v| v.to_string())
            .collect::<HashSet<_>>()
            .len(),
        10
    );
    let clients = w.get("/audit?resource_type=client").await;
    assert_eq!(entries(&clients.body).len(), 4);
    let eve_only = w.get("/audit?resource_type=user&resource_id=eve").await;
    assert_eq!(entries(&eve_only.body).len(), 3);
    let by_root = w.get("/audit?actor=root&limit=1").await;
    assert_eq!(entries(&by_root.body).len(), 1);
    let bad = w.get("/audit?resource_type=planet").await;
    assert_eq!((bad.status, bad.field()), (400, "resource_type"));
}

async fn reading_the_audit_log_needs_its_permission(backend: Backend) {
    let w = World::new(backend).await;
    w.post(
        "/roles",
        json!({"name": "Admins", "permissions": ["Manage Users", "Manage Roles", "Manage Clients"]}),
    )
    .await;
    let mut body = user_body("mallory");
    body["roles"] = json!({"primary_role": {"role": "Admins"}});
    body["password"] = json!("mallory's password");
    body["api_access"] = json!(true);
    w.create_user(body).await;
    let token = w.token_of("mallory", "mallory's password").await;
    let a = call(&w.admin, "GET", "/audit", Some(&token), None, None).await;
    assert_eq!((a.status, a.code()), (403, "forbidden"));
    assert!(a.body["message"]
        .as_str()
        .unwrap()
        .contains("View Audit Log"));
    assert_eq!(
        call(&w.admin, "GET", "/users", Some(&token), None, None)
            .await
            .status,
        200
    );
}

common::backend_tests!(
    every_change_is_recorded_with_who_when_and_what,
    reading_the_audit_log_needs_its_permission,
);
