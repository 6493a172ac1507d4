//! Hostile input gets a clear error and changes nothing: repeated JSON keys, names that display as
//! something else, an empty If-Match.

use serde_json::json;

use crate::support::*;

async fn a_key_given_twice_is_refused(backend: Backend) {
    let w = World::new(backend).await;
    // serde_json alone keeps the last value: a check made on the first could be bypassed by the second.
    let body = r#"{"username": "twice", "first_name": "A", "last_name": "B",
        "roles": {"primary_role": {"role": "Administrator"}, "extra_roles": [], "extra_roles": []}}"#;
    let response = reqwest::Client::new()
        .post(format!("{}/admin/v1/users", w.admin.url))
        .bearer_auth(&w.token)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let answer = read(response).await;
    assert_eq!(answer.status, 400, "{:?}", answer.body);
    assert_eq!(answer.code(), "bad_request");
    assert!(
        answer.body["message"]
            .as_str()
            .unwrap()
            .contains("\"extra_roles\""),
        "{:?}",
        answer.body
    );
    assert_eq!(
        w.get("/users/twice").await.status,
        404,
        "nothing was created"
    );
}

async fn control_and_bidirectional_characters_are_refused(backend: Backend) {
    let w = World::new(backend).await;
    for (field, value) in [
        ("first_name", "Ada\u{202E}nimda"),
        ("last_name", "Love\nlace"),
        ("email", "ada\u{2066}@example.com"),
        ("first_name", "null\u{0}byte"),
    ] {
        let mut body = user_body("ada");
        body[field] = json!(value);
        let answer = w.post("/users", body).await;
        assert_eq!(answer.status, 400, "{field}={value:?}: {:?}", answer.body);
        assert_eq!(answer.field(), field);
    }
    assert_eq!(w.get("/users/ada").await.status, 404);
    let mut role = json!({"name": "Readers", "description": "reads\u{202D}"});
    let answer = w.post("/roles", role.clone()).await;
    assert_eq!((answer.status, answer.field()), (400, "description"));
    role["description"] = json!("reads");
    assert_eq!(w.post("/roles", role).await.status, 201);
}

async fn an_empty_if_match_is_a_missing_one(backend: Backend) {
    let w = World::new(backend).await;
    w.create_user(user_body("ada")).await;
    let mut body = user_body("ada");
    body["first_name"] = json!("Changed");
    for empty in ["", " ", ","] {
        let answer = w.put("/users/ada", body.clone(), empty).await;
        assert_eq!(answer.status, 428, "If-Match {empty:?}: {:?}", answer.body);
    }
    assert_eq!(w.get("/users/ada").await.body["first_name"], "First");
}

common::backend_tests!(
    a_key_given_twice_is_refused,
    control_and_bidirectional_characters_are_refused,
    an_empty_if_match_is_a_missing_one,
);
