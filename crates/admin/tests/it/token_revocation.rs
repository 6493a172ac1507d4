//! Tokens end with what they were issued on: deleting a client or rotating its secret revokes its access
//! tokens (user tokens issued through it included) and its refresh tokens, unless the rotation asks to
//! keep them; blocking, deactivating or deleting a user revokes the user's. The token service's
//! introspection and refresh grant, this API and another service on the same revocation list (the
//! ingestion API) all refuse them.

use std::time::{Duration, Instant};

use ingest::testing::{test_config, TestIngest};
use serde_json::json;

use crate::support::*;

/// A client made through the API with every grant, administration access and an ingestion scope.
struct Client {
    id: String,
    secret: String,
    etag: String,
}

/// Tokens of a client: a client-credentials token, and root's access and refresh tokens through it.
struct Tokens {
    client: String,
    user: String,
    refresh: String,
}

async fn new_client(w: &World) -> Client {
    let created = w
        .post(
            "/clients",
            json!({"name": "integration",
                   "grant_types": ["client_credentials", "authorization_code", "refresh_token"],
                   "redirect_uris": [REDIRECT_URI], "issue_refresh_token": true,
                   "scopes": ["events:read"], "admin_access": true}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    Client {
        id: created.body["client_id"].as_str().unwrap().to_string(),
        secret: created.body["client_secret"].as_str().unwrap().to_string(),
        etag: created.etag(),
    }
}

async fn tokens(w: &World, c: &Client) -> Tokens {
    let cc = client_token(&w.auth, COMPANY, &c.id, &c.secret).await;
    assert_eq!(cc.status, 200, "{:?}", cc.body);
    let scope = [("scope", "refreshToken")];
    let user = code_flow(&w.auth, COMPANY, &c.id, &c.secret, ROOT, PASSWORD, &scope)
        .await
        .unwrap();
    Tokens {
        client: cc.body["access_token"].as_str().unwrap().to_string(),
        user: user["access_token"].as_str().unwrap().to_string(),
        refresh: user["refresh_token"].as_str().unwrap().to_string(),
    }
}

/// Whether the token service says the token is active, asked by the world's own client.
async fn active(w: &World, token: &str) -> bool {
    let response = reqwest::Client::new()
        .post(format!("{}/oauth/{COMPANY}/introspect", w.auth.url))
        .basic_auth(&w.client_id, Some(&w.secret))
        .form(&[("token", token)])
        .send()
        .await
        .unwrap();
    let answer = read(response).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    answer.body["active"].as_bool().unwrap()
}

/// Whether the refresh token is active, asked by its own client.
async fn refresh_active(w: &World, c: &Client, refresh: &str) -> bool {
    let response = reqwest::Client::new()
        .post(format!("{}/oauth/{COMPANY}/introspect", w.auth.url))
        .basic_auth(&c.id, Some(&c.secret))
        .form(&[("token", refresh), ("token_type_hint", "refresh_token")])
        .send()
        .await
        .unwrap();
    read(response).await.body["active"].as_bool().unwrap()
}

/// The status the ingestion API answers the token's listing of projects with.
async fn ingest_status(ingest: &TestIngest, token: &str) -> u16 {
    reqwest::Client::new()
        .get(format!("{}/v3/projects", ingest.url))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// This API's answer to the token reading root's record.
async fn admin_answer(w: &World, token: &str) -> Answer {
    call(&w.admin, "GET", "/users/root", Some(token), None, None).await
}

async fn refresh_grant(w: &World, c: &Client, refresh: &str) -> Answer {
    let response = reqwest::Client::new()
        .post(w.auth.token_url(COMPANY))
        .form(&[
            ("grant_type", "refresh_token"),
            ("client_id", c.id.as_str()),
            ("client_secret", c.secret.as_str()),
            ("refresh_token", refresh),
        ])
        .send()
        .await
        .unwrap();
    read(response).await
}

async fn rotate(w: &World, c: &Client, query: &str) -> Answer {
    let path = format!("/clients/{}/secret{query}", c.id);
    call(&w.admin, "POST", &path, Some(&w.token), None, Some(&c.etag)).await
}

async fn start_ingest(w: &World, revocation_cache_ms: u64) -> TestIngest {
    let mut config = test_config(&w.auth.url, &w.auth.db.url);
    config.revocation_cache_ms = revocation_cache_ms;
    TestIngest::start(config, w.auth.db.db.clone()).await
}

async fn deleting_a_client_revokes_its_tokens_everywhere(backend: Backend) {
    let w = World::new(backend).await;
    let ingest = start_ingest(&w, 0).await;
    let c = new_client(&w).await;
    let t = tokens(&w, &c).await;
    assert!(active(&w, &t.client).await);
    assert!(active(&w, &t.user).await);
    assert_eq!(ingest_status(&ingest, &t.client).await, 200);
    assert_eq!(admin_answer(&w, &t.user).await.status, 200);

    assert_eq!(
        w.delete(&format!("/clients/{}", c.id), &c.etag)
            .await
            .status,
        204
    );
    assert!(!active(&w, &t.client).await, "the client-credentials token");
    assert!(
        !active(&w, &t.user).await,
        "the user token issued through it"
    );
    assert_eq!(ingest_status(&ingest, &t.client).await, 401);
    let admin = admin_answer(&w, &t.user).await;
    assert_eq!((admin.status, admin.code()), (401, "invalid_token"));
    let refresh = refresh_grant(&w, &c, &t.refresh).await;
    assert_eq!(
        refresh.status, 401,
        "no client to refresh for: {:?}",
        refresh.body
    );
    // Tokens of other clients are untouched.
    assert!(active(&w, &w.token).await);
    assert_eq!(w.get("/users/root").await.status, 200);
}

async fn rotating_a_secret_revokes_its_tokens_unless_asked_to_keep_them(backend: Backend) {
    let w = World::new(backend).await;
    let ingest = start_ingest(&w, 0).await;
    let mut c = new_client(&w).await;
    let first = tokens(&w, &c).await;

    // A keep_tokens that is neither true nor false changes nothing.
    let bad = rotate(&w, &c, "?keep_tokens=yes").await;
    assert_eq!(
        (bad.status, bad.field()),
        (400, "keep_tokens"),
        "{:?}",
        bad.body
    );
    assert_eq!(
        client_token(&w.auth, COMPANY, &c.id, &c.secret)
            .await
            .status,
        200
    );
    assert_eq!(w.get(&format!("/clients/{}", c.id)).await.etag(), c.etag);

    let kept = rotate(&w, &c, "?keep_tokens=true").await;
    assert_eq!(kept.status, 200, "{:?}", kept.body);
    c.secret = kept.body["client_secret"].as_str().unwrap().to_string();
    c.etag = kept.etag();
    assert!(active(&w, &first.client).await, "kept");
    assert!(active(&w, &first.user).await, "kept");
    assert_eq!(ingest_status(&ingest, &first.client).await, 200);
    assert_eq!(admin_answer(&w, &first.user).await.status, 200);
    let refreshed = refresh_grant(&w, &c, &first.refresh).await;
    assert_eq!(refreshed.status, 200, "{:?}", refreshed.body);
    let second = Tokens {
        client: client_token(&w.auth, COMPANY, &c.id, &c.secret).await.body["access_token"]
            .as_str()
            .unwrap()
            .to_string(),
        user: refreshed.body["access_token"].as_str().unwrap().to_string(),
        refresh: refreshed.body["refresh_token"]
            .as_str()
            .unwrap()
            .to_string(),
    };
    assert!(refresh_active(&w, &c, &second.refresh).await);

    let revoking = rotate(&w, &c, "").await;
    assert_eq!(revoking.status, 200, "{:?}", revoking.body);
    c.secret = revoking.body["client_secret"].as_str().unwrap().to_string();
    for token in [&first.client, &first.user, &second.client, &second.user] {
        assert!(!active(&w, token).await, "issued under an earlier secret");
    }
    assert_eq!(ingest_status(&ingest, &second.client).await, 401);
    let admin = admin_answer(&w, &second.user).await;
    assert_eq!((admin.status, admin.code()), (401, "invalid_token"));
    assert!(!refresh_active(&w, &c, &second.refresh).await);
    let refused = refresh_grant(&w, &c, &second.refresh).await;
    assert_eq!(refused.status, 400, "{:?}", refused.body);
    assert_eq!(refused.body["error"], "invalid_grant");
    assert!(
        refused.body["error_description"]
            .as_str()
            .unwrap()
            .contains("secret was rotated"),
        "{:?}",
        refused.body
    );

    // What the new secret gets works at once.
    let third = tokens(&w, &c).await;
    assert!(active(&w, &third.client).await);
    assert!(active(&w, &third.user).await);
    assert_eq!(ingest_status(&ingest, &third.client).await, 200);
    assert_eq!(admin_answer(&w, &third.user).await.status, 200);
    assert_eq!(refresh_grant(&w, &c, &third.refresh).await.status, 200);
}

async fn blocking_or_deleting_a_user_revokes_the_users_tokens(backend: Backend) {
    let w = World::new(backend).await;
    let mut body = user_body("bob");
    body["password"] = json!("bob's long password");
    body["api_access"] = json!(true);
    w.create_user(body).await;
    let scope = [("scope", "refreshToken")];
    let sign_in = || async {
        code_flow(
            &w.auth,
            COMPANY,
            &w.client_id,
            &w.secret,
            "bob",
            "bob's long password",
            &scope,
        )
        .await
        .unwrap()
    };
    let before = sign_in().await;
    let token = before["access_token"].as_str().unwrap();
    let refresh = before["refresh_token"].as_str().unwrap();
    assert_eq!(admin_answer(&w, token).await.status, 200);

    let record = w.get("/users/bob").await;
    let mut blocked = record.body.clone();
    blocked["login_blocked"] = json!(true);
    let blocked = w.put("/users/bob", blocked, &record.etag()).await;
    assert_eq!(blocked.status, 200, "{:?}", blocked.body);
    assert!(!active(&w, token).await);
    let admin = admin_answer(&w, token).await;
    assert_eq!(
        (admin.status, admin.code()),
        (401, "invalid_token"),
        "{:?}",
        admin.body
    );

    // Unblocking does not bring them back; what bob gets afterwards works at once.
    let mut unblocked = blocked.body.clone();
    unblocked["login_blocked"] = json!(false);
    let unblocked = w.put("/users/bob", unblocked, &blocked.etag()).await;
    assert_eq!(unblocked.status, 200, "{:?}", unblocked.body);
    assert!(!active(&w, token).await, "revoked for good");
    assert_eq!(admin_answer(&w, token).await.status, 401);
    let c = Client {
        id: w.client_id.clone(),
        secret: w.secret.clone(),
        etag: String::new(),
    };
    let refused = refresh_grant(&w, &c, refresh).await;
    assert_eq!(refused.status, 400, "{:?}", refused.body);
    let after = sign_in().await;
    let token = after["access_token"].as_str().unwrap();
    assert!(active(&w, token).await);
    assert_eq!(admin_answer(&w, token).await.status, 200);

    // Deactivating does the same as blocking.
    let mut inactive = unblocked.body.clone();
    inactive["status"] = json!("INACTIVE");
    let inactive = w.put("/users/bob", inactive, &unblocked.etag()).await;
    assert_eq!(inactive.status, 200, "{:?}", inactive.body);
    assert_eq!(admin_answer(&w, token).await.status, 401);
    let mut active_again = inactive.body.clone();
    active_again["status"] = json!("ACTIVE");
    let active_again = w.put("/users/bob", active_again, &inactive.etag()).await;
    assert_eq!(active_again.status, 200);
    assert!(!active(&w, token).await);

    // And deleting.
    let last = sign_in().await;
    let token = last["access_token"].as_str().unwrap();
    assert!(active(&w, token).await);
    assert_eq!(
        w.delete("/users/bob", &active_again.etag()).await.status,
        204
    );
    assert!(!active(&w, token).await);
    assert_eq!(admin_answer(&w, token).await.status, 401);
}

/// With the revocation cache of a deployment (1 s), a service that has just accepted a token refuses it
/// within that time after its client is deleted.
async fn another_service_refuses_within_its_revocation_cache_time(backend: Backend) {
    let w = World::new(backend).await;
    let ingest = start_ingest(&w, 1000).await;
    let c = new_client(&w).await;
    let t = tokens(&w, &c).await;
    assert_eq!(ingest_status(&ingest, &t.client).await, 200);
    assert_eq!(
        w.delete(&format!("/clients/{}", c.id), &c.etag)
            .await
            .status,
        204
    );
    let deleted = Instant::now();
    while ingest_status(&ingest, &t.client).await != 401 {
        assert!(
            deleted.elapsed() < Duration::from_millis(2000),
            "still accepted {:?} after the deletion",
            deleted.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

common::backend_tests!(
    deleting_a_client_revokes_its_tokens_everywhere,
    rotating_a_secret_revokes_its_tokens_unless_asked_to_keep_them,
    blocking_or_deleting_a_user_revokes_the_users_tokens,
    another_service_refuses_within_its_revocation_cache_time,
);
