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

common::backend_tests!(
    own_writes_show_at_once_and_others_within_the_cache_time,
    a_blocked_caller_is_refused_once_the_cache_time_has_passed,
);
