//! Request bodies are typed: an unknown field or a value of the wrong type, at any depth, is 400
//! `invalid_field` naming its path; the read-only parts of a record are accepted so that a GET result can
//! be sent back; a key given twice is still refused.

use serde_json::json;

use crate::support::*;

async fn unknown_fields_and_wrong_types_name_their_path(backend: Backend) {
    let w = World::new(backend).await;
    let cases = [
        (
            "/users",
            json!({"roles": {"primary_role": {"role": 5}}}),
            "roles.primary_role.role",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator", "extra": 1}}}),
            "roles.primary_role.extra",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}}, "first_name": ["A"]}),
            "first_name",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}}, "nickname": "x"}),
            "nickname",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}},
                   "data-access": {"organization": [{"role": "r", "data_view": "d", "unit_group": "u",
                       "unit_group_display_name": "n", "name": "x"}]}}),
            "data-access.organization[0].name",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}, "extra_roles": ["Administrator2", 7]}}),
            "roles.extra_roles[1]",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}}, "automatic_update": "yes"}),
            "automatic_update",
        ),
        // A record is an object: serde alone would read it from an array of its fields, in order.
        (
            "/users",
            json!({"roles": [{"role": "Administrator"}, []]}),
            "roles",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": ["Administrator"]}}),
            "roles.primary_role",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}, "extra_roles": [["Auditor"]]}}),
            "roles.extra_roles[0]",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}}, "data-access": [[], []]}),
            "data-access",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}},
                   "data-access": {"organization": [["r", "d", "u", "n"]]}}),
            "data-access.organization[0]",
        ),
        (
            "/users",
            json!({"roles": {"primary_role": {"role": "Administrator"}},
                   "_system_properties": ["INACTIVE"]}),
            "_system_properties",
        ),
        (
            "/roles",
            json!({"name": "Readers", "permissions": "Manage Users"}),
            "permissions",
        ),
        (
            "/roles",
            json!({"name": "Readers", "colour": "red"}),
            "colour",
        ),
        (
            "/clients",
            json!({"name": "c", "grant_types": ["client_credentials"], "access_token_ttl": "1h"}),
            "access_token_ttl",
        ),
        (
            "/clients",
            json!({"name": "c", "grant_types": [1]}),
            "grant_types[0]",
        ),
        (
            "/clients",
            json!({"name": "c", "grant_types": ["client_credentials"], "secret": "s"}),
            "secret",
        ),
    ];
    for (collection, body, field) in cases {
        let mut body = body;
        if collection == "/users" {
            body["username"] = json!("typed");
        }
        let answer = w.post(collection, body.clone()).await;
        assert_eq!(
            (answer.status, answer.code(), answer.field()),
            (400, "invalid_field", field),
            "{collection} {body}: {:?}",
            answer.body
        );
    }
    assert_eq!(
        w.get("/users/typed").await.status,
        404,
        "nothing was created"
    );
}

async fn a_record_read_is_accepted_back(backend: Backend) {
    let w = World::new(backend).await;
    let mut body = user_body("ada");
    body["roles"]["extra_roles"] = json!([]);
    let created = w.post("/users", body).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let read = w.get("/users/ada").await;
    let mut back = read.body.clone();
    back["first_name"] = json!("Changed");
    back["_system_properties"]["status"] = json!("INACTIVE");
    let answer = w.put("/users/ada", back, &read.etag()).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.body["first_name"], "Changed");
    assert_eq!(answer.body["_system_properties"]["status"], "INACTIVE");

    let role = w.get("/roles/Administrator").await;
    let answer = w
        .put("/roles/Administrator", role.body.clone(), &role.etag())
        .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
}

async fn a_key_given_twice_is_still_refused(backend: Backend) {
    let w = World::new(backend).await;
    let body = r#"{"name": "twice", "grant_types": ["client_credentials"], "name": "again"}"#;
    let response = reqwest::Client::new()
        .post(format!("{}/admin/v1/clients", w.admin.url))
        .bearer_auth(&w.token)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let answer = read(response).await;
    assert_eq!(
        (answer.status, answer.code()),
        (400, "bad_request"),
        "{:?}",
        answer.body
    );
    assert!(answer.body["message"]
        .as_str()
        .unwrap()
        .contains("\"name\""));
}

common::backend_tests!(
    unknown_fields_and_wrong_types_name_their_path,
    a_record_read_is_accepted_back,
    a_key_given_twice_is_still_refused,
);
