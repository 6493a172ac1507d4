//! `/v3/projects`: a company's projects, and nobody else's.

use common::backend_tests;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::{Backend, World};

backend_tests!(
    projects_are_created_listed_changed_and_deleted_with_their_events,
    another_company_or_a_reader_cannot_manage_a_project,
    a_project_deleted_while_batches_arrive_leaves_no_event_behind,
);

async fn projects_are_created_listed_changed_and_deleted_with_their_events(backend: Backend) {
    let world = World::new(backend).await;
    let key = world.create_project("mobile", false).await;
    assert_eq!(key.len(), 32);
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));

    let (_, list) = world
        .call(Method::GET, "/v3/projects", &world.token, None)
        .await;
    let names: Vec<&str> = list["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mobile", "web"]);

    let (status, _) = world
        .call(
            Method::POST,
            "/v3/projects",
            &world.token,
            Some(json!({"name": "mobile"})),
        )
        .await;
    assert_eq!(status, 409);

    let path = format!("/v3/projects/{key}");
    let body = json!({"name": "mobile app", "server_time": true});
    let (_, changed) = world
        .call(Method::PUT, &path, &world.token, Some(body))
        .await;
    assert_eq!(
        (changed["name"].clone(), changed["server_time"].clone()),
        (json!("mobile app"), json!(true))
    );
    let answer = world
        .track(&key, json!([{"event_name": "e", "user_id": "u"}]))
        .await;
    assert_eq!(
        answer["results"]["stored"],
        json!(1),
        "server time applies at once: {answer}"
    );

    assert_eq!(
        world
            .call(Method::DELETE, &path, &world.token, None)
            .await
            .0,
        204
    );
    assert_eq!(
        world.call(Method::GET, &path, &world.token, None).await.0,
        404
    );
    let answer = world
        .track(&key, json!([{"event_name": "e", "user_id": "u"}]))
        .await;
    assert!(
        answer["results"]["error"]
            .as_str()
            .unwrap()
            .contains("unknown app key"),
        "{answer}"
    );

    let long = format!(" {} ", "n".repeat(100));
    for bad in [
        json!({"name": " ", "extra": 1}),
        json!({"name": " \t "}),
        json!({"name": "a\u{0085}b"}),
        json!({"name": long}),
    ] {
        assert_eq!(
            world
                .call(
                    Method::POST,
                    "/v3/projects",
                    &world.token,
                    Some(bad.clone())
                )
                .await
                .0,
            400,
            "{bad}"
        );
    }
    let (status, body) = world
        .call(
            Method::POST,
            "/v3/projects",
            &world.token,
            Some(json!({"name": "  spaced\u{00a0}out "})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["name"], "spaced\u{00a0}out");
}

async fn another_company_or_a_reader_cannot_manage_a_project(backend: Backend) {
    let world = World::new(backend).await;
    let other = world.other_company_token().await;
    let key = &world.app_key;
    for (method, path) in [
        (reqwest::Method::GET, format!("/v3/projects/{key}")),
        (reqwest::Method::PUT, format!("/v3/projects/{key}")),
        (reqwest::Method::DELETE, format!("/v3/projects/{key}")),
    ] {
        let response = world
            .http
            .request(method.clone(), world.url(&path))
            .bearer_auth(&other)
            .json(&json!({"name": "taken over", "server_time": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            404,
            "{method} {path} with another company's token"
        );
    }
    let (_, theirs) = world.call(Method::GET, "/v3/projects", &other, None).await;
    assert_eq!(
        theirs["projects"],
        json!([]),
        "another company sees none of acme's projects"
    );

    let reader = world.token_with_scope("events:read").await;
    for request in [
        world
            .http
            .post(world.url("/v3/projects"))
            .json(&json!({"name": "new"})),
        world.http.delete(world.url(&format!("/v3/projects/{key}"))),
    ] {
        let response = request.bearer_auth(&reader).send().await.unwrap();
        assert_eq!(response.status(), 403);
    }
    let (_, project) = world
        .call(
            Method::GET,
            &format!("/v3/projects/{key}"),
            &world.token,
            None,
        )
        .await;
    assert_eq!(
        (project["name"].clone(), project["server_time"].clone()),
        (json!("web"), json!(false)),
        "unchanged"
    );
}

async fn a_project_deleted_while_batches_arrive_leaves_no_event_behind(backend: Backend) {
    let world = World::new(backend).await;
    let key = world.create_project("doomed", false).await;
    let batch: Vec<Value> = (0..50)
        .map(|i| json!({"event_name": format!("e{i}"), "user_id": "u", "event_timestamp_epoch": crate::support::now_ms()}))
        .collect();
    let world = &world;
    let sender = |_| {
        let (key, batch) = (key.clone(), json!(batch));
        async move {
            let mut stored = 0;
            for _ in 0..40 {
                let answer = world.track(&key, batch.clone()).await;
                match answer["results"]["error"].as_str() {
                    None => stored += 1,
                    Some(error) => {
                        assert!(error.contains("unknown app key"), "{answer}");
                        return stored;
                    }
                }
            }
            stored
        }
    };
    let deleter = async {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        let response = world
            .http
            .delete(world.url(&format!("/v3/projects/{key}")))
            .bearer_auth(&world.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 204);
    };
    let (stored, ..) = tokio::join!(futures_util::future::join_all((0..4).map(sender)), deleter);
    assert!(
        stored.iter().sum::<i32>() > 0,
        "some batches landed before the deletion"
    );
    let left = ingest::store::events(
        &world.auth.db.db,
        &ingest::store::EventQuery {
            app_key: &key,
            from_ms: 0,
            to_ms: 253_402_300_800_000,
            event_name: None,
            after: (0, -1),
            limit: 10,
        },
    )
    .await
    .unwrap();
    assert!(
        left.is_empty(),
        "{} events outlived their project",
        left.len()
    );
}
