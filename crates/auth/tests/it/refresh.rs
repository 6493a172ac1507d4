//! The refresh-token grant: rotation, reuse detection, users who may no longer sign in, lifetime,
//! revocation and binding to the client.

use crate::support::*;

/// Signs alice in with `scope=refreshToken` and returns the refresh token.
async fn refresh_token(s: &Setup) -> String {
    let body = tokens(s, &[("scope", "refreshToken")]).await;
    body["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_string()
}

fn assert_invalid_grant((status, body, _): (u16, serde_json::Value, reqwest::header::HeaderMap)) {
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    assert!(body.get("access_token").is_none());
}

/// `assert_invalid_grant`, with a description that says `why`.
fn assert_refused_because(answer: (u16, serde_json::Value, reqwest::header::HeaderMap), why: &str) {
    let description = answer.1["error_description"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_invalid_grant(answer);
    assert!(
        description.contains(why),
        "{description:?} does not say {why:?}"
    );
}

async fn a_refresh_rotates_the_refresh_token(backend: Backend) {
    let s = setup(backend).await;
    let old = refresh_token(&s).await;
    let (status, body, headers) = refresh(&s.auth, &s.client_id, &s.secret, &old).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        keys(&body),
        ["access_token", "expires_in", "refresh_token", "token_type"],
        "no id_token or scope on a refresh"
    );
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(headers["cache-control"], "no-store");
    let new = body["refresh_token"].as_str().unwrap();
    assert_ne!(new, old, "rotated");
    let claims = s
        .auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(claims.sub, s.user.id);
    assert_eq!(claims.client_id, s.client_id);
    assert_eq!(
        claims.scope, "refreshToken admin",
        "the client has administration access"
    );

    let (status, again, _) = refresh(&s.auth, &s.client_id, &s.secret, new).await;
    assert_eq!(status, 200, "the new token works: {again}");
}

async fn reusing_a_rotated_token_revokes_the_family(backend: Backend) {
    let s = setup(backend).await;
    let first = refresh_token(&s).await;
    let (_, body, _) = refresh(&s.auth, &s.client_id, &s.secret, &first).await;
    let second = body["refresh_token"].as_str().unwrap().to_string();
    let (_, body, _) = refresh(&s.auth, &s.client_id, &s.secret, &second).await;
    let newest = body["refresh_token"].as_str().unwrap().to_string();
    let newest_access = body["access_token"].as_str().unwrap().to_string();
    let (_, active) = introspect(&s.auth, &s.client_id, &s.secret, &newest_access).await;
    assert_eq!(active["active"], true);

    assert_invalid_grant(refresh(&s.auth, &s.client_id, &s.secret, &first).await);
    assert_invalid_grant(refresh(&s.auth, &s.client_id, &s.secret, &newest).await);
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, &newest_access).await;
    assert_eq!(
        body["active"], false,
        "the family's access tokens are revoked"
    );

    // Another sign-in starts a new family that is unaffected.
    let other = refresh_token(&s).await;
    let (status, _, _) = refresh(&s.auth, &s.client_id, &s.secret, &other).await;
    assert_eq!(status, 200);
}

async fn a_blocked_users_refresh_token_is_refused(backend: Backend) {
    let s = setup(backend).await;
    let token = refresh_token(&s).await;
    update_user(&s.auth, USERNAME, |u| u.login_blocked = true).await;
    assert_refused_because(
        refresh(&s.auth, &s.client_id, &s.secret, &token).await,
        "the user is blocked",
    );

    // Unblocking does not bring the refused token back.
    update_user(&s.auth, USERNAME, |u| u.login_blocked = false).await;
    assert_invalid_grant(refresh(&s.auth, &s.client_id, &s.secret, &token).await);
}

async fn an_inactive_users_refresh_token_is_refused(backend: Backend) {
    let s = setup(backend).await;
    let token = refresh_token(&s).await;
    update_user(&s.auth, USERNAME, |u| {
        u.status = directory::STATUS_INACTIVE.into()
    })
    .await;
    assert_refused_because(
        refresh(&s.auth, &s.client_id, &s.secret, &token).await,
        "the user is inactive",
    );
}

/// After a password reset the refusal says so, rather than that the user can no longer sign in (the
/// user can, with the new password).
async fn a_refresh_after_a_password_reset_says_so(backend: Backend) {
    let s = setup(backend).await;
    let token = refresh_token(&s).await;
    let at = chrono::Utc::now();
    directory::set_password(&s.auth.service.state.db, "acme", &s.user.id, "new-hash", at)
        .await
        .unwrap();
    assert_refused_because(
        refresh(&s.auth, &s.client_id, &s.secret, &token).await,
        "password was changed after this sign-in",
    );
}

async fn a_deleted_users_refresh_token_is_refused(backend: Backend) {
    let s = setup(backend).await;
    let token = refresh_token(&s).await;
    let user = get_user(&s.auth, USERNAME).await;
    assert!(directory::delete_user_if_version(
        &s.auth.service.state.db,
        "acme",
        USERNAME,
        user.version
    )
    .await
    .unwrap());
    assert_refused_because(
        refresh(&s.auth, &s.client_id, &s.secret, &token).await,
        "the user no longer exists",
    );
}

async fn a_refresh_token_expires_with_the_clients_lifetime(backend: Backend) {
    let spec = ClientSpec {
        refresh_token_ttl: Some(1),
        ..full_client_spec()
    };
    let s = setup_with(TestAuth::start(backend).await, spec).await;
    let first = refresh_token(&s).await;
    let (status, body, _) = refresh(&s.auth, &s.client_id, &s.secret, &first).await;
    assert_eq!(status, 200, "usable within its lifetime: {body}");
    let second = body["refresh_token"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    assert_invalid_grant(refresh(&s.auth, &s.client_id, &s.secret, &second).await);
}

/// A lifetime whose milliseconds an i64 cannot hold (the first overflows the multiplication, the second
/// the addition to the clock) is a token that does not expire: never a failed exchange, never a token
/// born expired.
async fn a_refresh_token_lifetime_past_any_date_does_not_expire(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    auth.add_company("acme").await;
    auth.add_user("acme", USERNAME, PASSWORD).await;
    for ttl in [i64::MAX, i64::MAX / 1000] {
        let spec = ClientSpec {
            refresh_token_ttl: Some(ttl),
            ..full_client_spec()
        };
        let (client, secret) = auth.add_client("acme", spec).await;
        let secret = secret.unwrap();
        let code = authorize(&auth, &client.client_id, &[("scope", "refreshToken")])
            .await
            .code;
        let (status, body, _) = exchange(
            &auth,
            &client.client_id,
            Some(&secret),
            &code,
            &[("redirectURI", REDIRECT_URI)],
        )
        .await;
        assert_eq!(status, 200, "ttl {ttl}: {body}");
        let first = body["refresh_token"].as_str().expect("a refresh token");
        let (_, introspected) = introspect(&auth, &client.client_id, &secret, first).await;
        assert_eq!(introspected["active"], true, "ttl {ttl}: {introspected}");
        assert!(
            introspected["exp"].as_i64().unwrap() > now_secs() + 100 * 365 * 86400,
            "ttl {ttl}: {introspected}"
        );
        let (status, body, _) = refresh(&auth, &client.client_id, &secret, first).await;
        assert_eq!(status, 200, "ttl {ttl}: the refresh works: {body}");
        let second = body["refresh_token"].as_str().unwrap();
        let (status, body, _) = refresh(&auth, &client.client_id, &secret, second).await;
        assert_eq!(status, 200, "ttl {ttl}: and its successor: {body}");
    }
}

async fn a_revoked_refresh_token_is_refused(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[("scope", "refreshToken openid")]).await;
    let token = body["refresh_token"].as_str().unwrap();
    let access = body["access_token"].as_str().unwrap();
    let (_, active) = introspect(&s.auth, &s.client_id, &s.secret, token).await;
    assert_eq!(active["active"], true);

    assert_eq!(revoke(&s.auth, &s.client_id, &s.secret, token).await, 200);
    assert_invalid_grant(refresh(&s.auth, &s.client_id, &s.secret, token).await);
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, token).await;
    assert_eq!(body, serde_json::json!({"active": false}));
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
    assert_eq!(
        body["active"], false,
        "the access token issued with it is revoked too"
    );
}

async fn another_client_cannot_use_the_refresh_token(backend: Backend) {
    let s = setup(backend).await;
    let token = refresh_token(&s).await;
    let (other, other_secret) = s.auth.add_client("acme", full_client_spec()).await;
    let other_secret = other_secret.unwrap();
    assert_invalid_grant(refresh(&s.auth, &other.client_id, &other_secret, &token).await);

    // Revoking it as the other client does nothing.
    assert_eq!(
        revoke(&s.auth, &other.client_id, &other_secret, &token).await,
        200
    );

    let (status, body, _) = refresh(&s.auth, &s.client_id, &s.secret, &token).await;
    assert_eq!(status, 200, "the owner still can: {body}");

    let (status, body, _) = refresh(&s.auth, &s.client_id, "wrong secret", &token).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
}

common::backend_tests!(
    a_refresh_rotates_the_refresh_token,
    reusing_a_rotated_token_revokes_the_family,
    a_blocked_users_refresh_token_is_refused,
    an_inactive_users_refresh_token_is_refused,
    a_refresh_after_a_password_reset_says_so,
    a_deleted_users_refresh_token_is_refused,
    a_refresh_token_expires_with_the_clients_lifetime,
    a_refresh_token_lifetime_past_any_date_does_not_expire,
    a_revoked_refresh_token_is_refused,
    another_client_cannot_use_the_refresh_token,
);
