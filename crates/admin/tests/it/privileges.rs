//! Least privilege: a caller grants only permissions it holds, never changes a user or role holding more
//! than it does, sets another user's password only with Set Passwords, and only user tokens of clients
//! with administration access get in at all.

use directory::ClientSpec;
use serde_json::{json, Value};

use crate::support::*;

/// Creates a role with `permissions` and a user `name` holding it (password `PASSWORD`, API access), and
/// returns that user's token.
async fn user_with(w: &World, name: &str, role: &str, permissions: &[&str]) -> String {
    let created = w
        .post("/roles", json!({"name": role, "permissions": permissions}))
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let mut body = user_body(name);
    body["roles"] = json!({"primary_role": {"role": role}, "extra_roles": []});
    body["password"] = json!(PASSWORD);
    body["api_access"] = json!(true);
    w.create_user(body).await;
    w.token_of(name, PASSWORD).await
}

async fn as_user(
    w: &World,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
    if_match: Option<&str>,
) -> Answer {
    call(&w.admin, method, path, Some(token), body, if_match).await
}

async fn a_user_manager_cannot_make_itself_administrator(backend: Backend) {
    let w = World::new(backend).await;
    let token = user_with(&w, "mallory", "User managers", &["Manage Users"]).await;
    let own = as_user(&w, &token, "GET", "/users/mallory", None, None).await;
    assert_eq!(own.status, 200, "{:?}", own.body);

    let mut escalated = own.body.clone();
    escalated["roles"]["extra_roles"] = json!([{"role": "Administrator"}]);
    let refused = as_user(
        &w,
        &token,
        "PUT",
        "/users/mallory",
        Some(escalated),
        Some(&own.etag()),
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("Manage Roles"));
    let after = w.get("/users/mallory").await;
    assert_eq!(
        after.body["roles"]["extra_roles"],
        json!([]),
        "nothing changed"
    );

    // Nor may it create a user with more than it holds, or touch the administrator.
    let mut admin_body = user_body("eve");
    admin_body["password"] = json!(PASSWORD);
    let created = as_user(&w, &token, "POST", "/users", Some(admin_body), None).await;
    assert_eq!(created.status, 403, "{:?}", created.body);
    assert_eq!(w.get("/users/eve").await.status, 404);

    let root = w.get(&format!("/users/{ROOT}")).await;
    let mut takeover = root.body.clone();
    takeover["password"] = json!("mallory owns this now");
    let refused = as_user(
        &w,
        &token,
        "PUT",
        &format!("/users/{ROOT}"),
        Some(takeover),
        Some(&root.etag()),
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    let refused = as_user(
        &w,
        &token,
        "DELETE",
        &format!("/users/{ROOT}"),
        None,
        Some(&root.etag()),
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    w.token_of(ROOT, PASSWORD).await;
}

async fn another_users_password_needs_set_passwords(backend: Backend) {
    let w = World::new(backend).await;
    let manager = user_with(&w, "manager", "User managers", &["Manage Users"]).await;
    // A peer holding no more than the manager.
    let mut peer = user_body("peer");
    peer["roles"] = json!({"primary_role": {"role": "User managers"}, "extra_roles": []});
    peer["password"] = json!(PASSWORD);
    w.create_user(peer).await;
    let record = as_user(&w, &manager, "GET", "/users/peer", None, None).await;

    let mut reset = record.body.clone();
    reset["password"] = json!("the manager knows this one");
    let refused = as_user(
        &w,
        &manager,
        "PUT",
        "/users/peer",
        Some(reset.clone()),
        Some(&record.etag()),
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("Set Passwords"));
    w.token_of("peer", PASSWORD).await;

    // The manager may change its own password, and other fields of the peer.
    let own = as_user(&w, &manager, "GET", "/users/manager", None, None).await;
    let mut mine = own.body.clone();
    mine["password"] = json!("a new password of mine");
    let changed = as_user(
        &w,
        &manager,
        "PUT",
        "/users/manager",
        Some(mine),
        Some(&own.etag()),
    )
    .await;
    assert_eq!(changed.status, 200, "{:?}", changed.body);
    let manager = w.token_of("manager", "a new password of mine").await;
    let mut renamed = record.body.clone();
    renamed["first_name"] = json!("Petra");
    let ok = as_user(
        &w,
        &manager,
        "PUT",
        "/users/peer",
        Some(renamed),
        Some(&record.etag()),
    )
    .await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);

    // With Set Passwords (granted by root, who holds it) the reset goes through.
    let role = w.get("/roles/User%20managers").await;
    let granted = w
        .put(
            "/roles/User%20managers",
            json!({"permissions": ["Manage Users", "Set Passwords"]}),
            &role.etag(),
        )
        .await;
    assert_eq!(granted.status, 200, "{:?}", granted.body);
    let record = w.get("/users/peer").await;
    let mut reset = record.body.clone();
    reset["password"] = json!("the manager knows this one");
    let done = as_user(
        &w,
        &manager,
        "PUT",
        "/users/peer",
        Some(reset),
        Some(&record.etag()),
    )
    .await;
    assert_eq!(done.status, 200, "{:?}", done.body);
    w.token_of("peer", "the manager knows this one").await;
}

async fn a_user_manager_cannot_remake_a_peer_with_a_password_of_its_own(backend: Backend) {
    let w = World::new(backend).await;
    let manager = user_with(&w, "manager", "User managers", &["Manage Users"]).await;
    let mut peer = user_body("peer");
    peer["roles"] = json!({"primary_role": {"role": "User managers"}, "extra_roles": []});
    peer["password"] = json!(PASSWORD);
    w.create_user(peer.clone()).await;
    let record = as_user(&w, &manager, "GET", "/users/peer", None, None).await;
    let deleted = as_user(
        &w,
        &manager,
        "DELETE",
        "/users/peer",
        None,
        Some(&record.etag()),
    )
    .await;
    assert_eq!(deleted.status, 204, "{:?}", deleted.body);
    // Made again with a password the manager chose: that would be a password reset by another name.
    peer["password"] = json!("the manager knows this one");
    peer["api_access"] = json!(true);
    let refused = as_user(&w, &manager, "POST", "/users", Some(peer.clone()), None).await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("Set Passwords"));
    assert_eq!(w.get("/users/peer").await.status, 404, "nothing was made");
    // Without a password the account is made, and nobody can sign in to it until a holder of Set
    // Passwords sets one.
    peer.as_object_mut().unwrap().remove("password");
    let made = as_user(&w, &manager, "POST", "/users", Some(peer), None).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    for password in [PASSWORD, "the manager knows this one"] {
        let signed_in = w
            .auth
            .log_in(&browser(), COMPANY, &w.client_id, "peer", password, &[])
            .await;
        assert!(signed_in.is_err(), "peer has no password yet");
    }
}

async fn only_a_holder_of_every_permission_manages_clients_with_admin_access(backend: Backend) {
    let w = World::new(backend).await;
    let token = user_with(&w, "clint", "Client managers", &["Manage Clients"]).await;
    // A client of its own with administration access, sent to an address of its choosing: the
    // administrator signing in through it would hand over its powers.
    let admin_client = json!({"name": "evil", "grant_types": ["authorization_code"],
                              "redirect_uris": ["https://attacker.example/cb"],
                              "admin_access": true});
    let refused = as_user(
        &w,
        &token,
        "POST",
        "/clients",
        Some(admin_client.clone()),
        None,
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("Manage Users"));
    let listed = w.get("/clients").await;
    let names: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"evil"), "{names:?}");

    // A client without it is the manager's to make, but not to give it afterwards.
    let mut plain = admin_client.clone();
    plain["admin_access"] = json!(false);
    let made = as_user(&w, &token, "POST", "/clients", Some(plain.clone()), None).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    let id = made.body["client_id"].as_str().unwrap().to_string();
    let refused = as_user(
        &w,
        &token,
        "PUT",
        &format!("/clients/{id}"),
        Some(admin_client.clone()),
        Some(&made.etag()),
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    let after = w.get(&format!("/clients/{id}")).await;
    assert_eq!(after.body["admin_access"], json!(false));

    // Nor may it change, rotate the secret of or delete a client that has it: the one the
    // administrator signs in through.
    let theirs = w.get(&format!("/clients/{}", w.client_id)).await;
    assert_eq!(theirs.body["admin_access"], json!(true));
    let path = format!("/clients/{}", w.client_id);
    let mut redirected = theirs.body.clone();
    redirected["redirect_uris"] = json!(["https://attacker.example/cb"]);
    for (method, path, body) in [
        ("PUT", path.clone(), Some(redirected)),
        ("POST", format!("{path}/secret"), None),
        ("DELETE", path.clone(), None),
    ] {
        let refused = as_user(&w, &token, method, &path, body, Some(&theirs.etag())).await;
        assert_eq!(refused.status, 403, "{method} {path}: {:?}", refused.body);
    }
    let unchanged = w.get(&path).await;
    assert_eq!(unchanged.etag(), theirs.etag());
    w.token_of(ROOT, PASSWORD).await;

    // The administrator, holding every permission, may.
    let made = w.post("/clients", admin_client).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
}

async fn a_role_manager_cannot_grant_what_it_lacks(backend: Backend) {
    let w = World::new(backend).await;
    let token = user_with(&w, "rolf", "Role managers", &["Manage Roles"]).await;
    let own = as_user(&w, &token, "GET", "/roles/Role%20managers", None, None).await;
    assert_eq!(own.status, 200, "{:?}", own.body);
    let refused = as_user(
        &w,
        &token,
        "PUT",
        "/roles/Role%20managers",
        Some(
            json!({"permissions": ["Manage Roles", "Manage Users", "Manage Clients",
                                    "View Audit Log", "Set Passwords"]}),
        ),
        Some(&own.etag()),
    )
    .await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    let after = w.get("/roles/Role%20managers").await;
    assert_eq!(after.body["permissions"], json!(["Manage Roles"]));

    let created = as_user(
        &w,
        &token,
        "POST",
        "/roles",
        Some(json!({"name": "Everything", "permissions": ["Manage Users"]})),
        None,
    )
    .await;
    assert_eq!(created.status, 403, "{:?}", created.body);
    // A role it fully holds is fine to create.
    let created = as_user(
        &w,
        &token,
        "POST",
        "/roles",
        Some(json!({"name": "Helpers", "permissions": ["Manage Roles"]})),
        None,
    )
    .await;
    assert_eq!(created.status, 201, "{:?}", created.body);

    // The Administrator role holds more: it can be neither changed nor deleted by rolf.
    let admin_role = w.get("/roles/Administrator").await;
    for (method, body) in [
        ("PUT", Some(json!({"permissions": ["Manage Roles"]}))),
        ("DELETE", None),
    ] {
        let refused = as_user(
            &w,
            &token,
            method,
            "/roles/Administrator",
            body,
            Some(&admin_role.etag()),
        )
        .await;
        assert_eq!(refused.status, 403, "{method}: {:?}", refused.body);
    }
    let still = w.get("/roles/Administrator").await;
    assert_eq!(still.body["permissions"], admin_role.body["permissions"]);
}

async fn only_tokens_of_clients_with_admin_access_get_in(backend: Backend) {
    let w = World::new(backend).await;
    // A public client that asked only for openid.
    let spec = ClientSpec {
        name: "a single-page app".into(),
        public: true,
        admin_access: false,
        grant_types: vec!["authorization_code".into()],
        ..auth::testing::full_client_spec()
    };
    let (spa, _) = w.auth.add_client(COMPANY, spec).await;
    let verifier = "a-code-verifier-that-is-long-enough-for-pkce-0123456789";
    let challenge = auth::pkce::challenge_of(verifier);
    let redirected = w
        .auth
        .log_in(
            &browser(),
            COMPANY,
            &spa.client_id,
            ROOT,
            PASSWORD,
            &[
                ("scope", "openid"),
                ("code_challenge", &challenge),
                ("code_challenge_method", "S256"),
            ],
        )
        .await
        .expect("root signs in to the app");
    let tokens = read(
        reqwest::Client::new()
            .post(w.auth.token_url(COMPANY))
            .form(&[
                ("grant_type", "authorization_code"),
                ("client_id", spa.client_id.as_str()),
                ("code", redirected.code.as_str()),
                ("redirect_uri", REDIRECT_URI),
                ("code_verifier", verifier),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(tokens.status, 200, "{:?}", tokens.body);
    let app_token = tokens.body["access_token"].as_str().unwrap();
    let refused = call(&w.admin, "GET", "/users", Some(app_token), None, None).await;
    assert_eq!(refused.status, 403, "{:?}", refused.body);
    assert!(refused.body["message"]
        .as_str()
        .unwrap()
        .contains("administration access"));

    // The same account through the client that has administration access gets in; its token says so
    // whatever scope was asked for.
    let body = code_flow(
        &w.auth,
        COMPANY,
        &w.client_id,
        &w.secret,
        ROOT,
        PASSWORD,
        &[("scope", "refreshToken")],
    )
    .await
    .unwrap();
    assert_eq!(
        body["scope"], "refreshToken",
        "the response shows the grant"
    );
    let claims = w
        .auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .unwrap();
    assert!(claims.has_scope("admin"), "{}", claims.scope);
    let ok = call(
        &w.admin,
        "GET",
        "/users",
        body["access_token"].as_str(),
        None,
        None,
    )
    .await;
    assert_eq!(ok.status, 200, "{:?}", ok.body);

    // New clients have it off; turning it on is a setting of the client.
    let created = w
        .post(
            "/clients",
            json!({"name": "reporting", "grant_types": ["authorization_code"],
                   "redirect_uris": [REDIRECT_URI]}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.body["admin_access"], false);
}

async fn a_revoked_token_does_not_use_up_the_daily_quota(backend: Backend) {
    let w = World::with(backend, |c| {
        c.rate_limit_per_day = 3;
        c.rate_limit_flush_ms = 10;
    })
    .await;
    let victim = w.token_of(ROOT, PASSWORD).await;
    w.revoke(&victim).await;
    for _ in 0..10 {
        let refused = call(&w.admin, "GET", "/users", Some(&victim), None, None).await;
        assert_eq!(refused.status, 401, "{:?}", refused.body);
    }
    // The account's own live token still has its whole quota.
    for i in 0..3 {
        let ok = w.get("/users").await;
        assert_eq!(ok.status, 200, "request {i}: {:?}", ok.body);
    }
    assert_eq!(w.get("/users").await.status, 429);
}

async fn a_password_change_ends_sessions_and_refresh_tokens(backend: Backend) {
    let w = World::new(backend).await;
    let mut body = user_body("carol");
    body["password"] = json!(PASSWORD);
    body["api_access"] = json!(true);
    w.create_user(body).await;
    let browser = browser();
    let first = w
        .auth
        .log_in(
            &browser,
            COMPANY,
            &w.client_id,
            "carol",
            PASSWORD,
            &[("scope", "refreshToken")],
        )
        .await
        .expect("carol signs in");
    let tokens = read(
        reqwest::Client::new()
            .post(w.auth.token_url(COMPANY))
            .form(&[
                ("grant_type", "authorization_code"),
                ("client_id", w.client_id.as_str()),
                ("client_secret", w.secret.as_str()),
                ("code", first.code.as_str()),
                ("redirectURI", REDIRECT_URI),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    let refresh = tokens.body["refresh_token"].as_str().unwrap().to_string();

    let record = w.get("/users/carol").await;
    let mut reset = record.body.clone();
    reset["password"] = json!("a password after the reset");
    assert_eq!(
        w.put("/users/carol", reset, &record.etag()).await.status,
        200
    );

    // The old refresh token no longer refreshes.
    let refused = read(
        reqwest::Client::new()
            .post(w.auth.token_url(COMPANY))
            .form(&[
                ("grant_type", "refresh_token"),
                ("client_id", w.client_id.as_str()),
                ("client_secret", w.secret.as_str()),
                ("refresh_token", refresh.as_str()),
            ])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(refused.status, 400, "{:?}", refused.body);
    assert_eq!(refused.body["error"], "invalid_grant");

    // The old login cookie no longer gets a code without the form.
    let url = reqwest::Url::parse_with_params(
        &w.auth.authorize_url(COMPANY),
        &[
            ("client_id", w.client_id.as_str()),
            ("response_type", "code"),
            ("redirect_uri", REDIRECT_URI),
            ("state", "after-reset"),
        ],
    )
    .unwrap();
    let again = browser.get(url).send().await.unwrap();
    assert_eq!(again.status(), 200, "the login form is shown again");
    assert!(again.text().await.unwrap().contains("name=\"password\""));
}

common::backend_tests!(
    a_user_manager_cannot_make_itself_administrator,
    another_users_password_needs_set_passwords,
    a_user_manager_cannot_remake_a_peer_with_a_password_of_its_own,
    only_a_holder_of_every_permission_manages_clients_with_admin_access,
    a_role_manager_cannot_grant_what_it_lacks,
    only_tokens_of_clients_with_admin_access_get_in,
    a_revoked_token_does_not_use_up_the_daily_quota,
    a_password_change_ends_sessions_and_refresh_tokens,
);
