//! The replica's read cache (`read_cache_ms`): changes made through this replica show at once; changes
//! made elsewhere (another replica, the token service) show within the cache time.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

async fn own_writes_show_at_once_and_others_within_the_cache_time(backend: Backend) {
    let world = World::with(backend, |c| c.read_cache_ms = 800).await;
    world.create_user(user_body("ada")).await;
    let first = world.get("/users/ada").await;
    assert_eq!(first.status, 200);

    // A write through this replica is visible on the next read.
    let mut body = user_body("ada");
    body["first_name"] = json!("Augusta");
    let put = world.put("/users/ada", body, &first.etag()).await;
    assert_eq!(put.status, 200, "{:?}", put.body);
    assert_eq!(world.get("/users/ada").await.body["first_name"], "Augusta");

    // A write elsewhere (straight to the shared directory, as another replica would) shows after the cache time.
    let db = &world.auth.service.state.db;
    let mut user = directory::get_user(db, COMPANY, "ada")
        .await
        .unwrap()
        .unwrap();
    user.first_name = "Countess".into();
    user.version += 1;
    update_user(db, &user).await;
    assert_eq!(
        world.get("/users/ada").await.body["first_name"],
        "Augusta",
        "served from the cache"
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    let fresh = world.get("/users/ada").await;
    assert_eq!(fresh.body["first_name"], "Countess");
    assert_eq!(fresh.etag(), format!("W/\"{}\"", user.version));
}

async fn a_blocked_caller_is_refused_once_the_cache_time_has_passed(backend: Backend) {
    let world = World::with(backend, |c| c.read_cache_ms = 800).await;
    assert_eq!(world.get(&format!("/users/{ROOT}")).await.status, 200);
    let db = &world.auth.service.state.db;
    let mut root = directory::get_user(db, COMPANY, ROOT)
        .await
        .unwrap()
        .unwrap();
    root.login_blocked = true;
    root.version += 1;
    update_user(db, &root).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    let refused = world.get(&format!("/users/{ROOT}")).await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
}

/// The caller's own record is served from the account the guard read for the request: it must be as
/// fresh as any read and equal, field by field, to the record as the list reads it from storage.
async fn the_callers_own_record_is_as_fresh_as_any_read(backend: Backend) {
    let world = World::with(backend, |c| c.read_cache_ms = 0).await;
    let path = format!("/users/{ROOT}");
    let before = world.get(&path).await;
    assert_eq!(before.status, 200, "{:?}", before.body);

    let db = &world.auth.service.state.db;
    let mut root = directory::get_user(db, COMPANY, ROOT)
        .await
        .unwrap()
        .unwrap();
    root.first_name = "Changed elsewhere".into();
    root.version += 1;
    update_user(db, &root).await;

    let after = world.get(&path).await;
    assert_eq!(after.body["first_name"], "Changed elsewhere");
    assert_eq!(after.etag(), format!("W/\"{}\"", root.version));
    let list = world.get("/users?limit=100").await;
    let listed = list.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == ROOT)
        .cloned()
        .unwrap();
    assert_eq!(after.body, listed);
}

common::backend_tests!(
    the_callers_own_record_is_as_fresh_as_any_read,
    own_writes_show_at_once_and_others_within_the_cache_time,
    a_blocked_caller_is_refused_once_the_cache_time_has_passed,
);
