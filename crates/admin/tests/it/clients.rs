//! OAuth clients: registration with a secret shown once, settings the token service honours (grants,
//! redirect URIs, Issue Refresh Token, lifetimes), secret rotation, deletion, validation.

use serde_json::json;

use crate::support::*;

async fn a_client_secret_is_shown_once_and_rotates(backend: Backend) {
    let w = World::new(backend).await;
    let created = w
        .post(
            "/clients",
            json!({"name": "reporting", "grant_types": ["client_credentials"],
                   "scopes": ["analytics:read"]}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.header("cache-control").unwrap(), "no-store");
    assert_eq!(created.etag(), "W/\"1\"");
    let id = created.body["client_id"].as_str().unwrap().to_string();
    let secret = created.body["client_secret"].as_str().unwrap().to_string();
    assert!(secret.len() >= 40);
    assert_eq!(created.body["access_token_ttl"], 3600);
    assert!(created.body["refresh_token_ttl"].is_null(), "unlimited");
    assert_eq!(created.body["public"], false);

    let read = w.get(&format!("/clients/{id}")).await;
    assert_eq!(read.status, 200);
    assert!(read.body.get("client_secret").is_none());
    assert!(!read.body.to_string().contains(&secret));
    let listed = w.get("/clients").await;
    assert!(!listed.body.to_string().contains(&secret));
    assert!(listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["client_id"] == id.as_str()));

    let token = client_token(&w.auth, COMPANY, &id, &secret).await;
    assert_eq!(token.status, 200, "{:?}", token.body);
    assert_eq!(token.body["expires_in"], 3600);

    // Rotation needs the current ETag; the old secret stops working at once.
    let path = format!("/clients/{id}/secret");
    let none = call(&w.admin, "POST", &path, Some(&w.token), None, None).await;
    assert_eq!(none.status, 428);
    let rotated = call(
        &w.admin,
        "POST",
        &path,
        Some(&w.token),
        None,
        Some(&read.etag()),
    )
    .await;
    assert_eq!(rotated.status, 200, "{:?}", rotated.body);
    assert_eq!(rotated.header("cache-control").unwrap(), "no-store");
    let new_secret = rotated.body["client_secret"].as_str().unwrap().to_string();
    assert_ne!(new_secret, secret);
    assert_eq!(rotated.etag(), "W/\"2\"");
    assert!(rotated.body["secret_rotated_on"].is_string());
    assert_eq!(
        client_token(&w.auth, COMPANY, &id, &secret).await.status,
        401
    );
    assert_eq!(
        client_token(&w.auth, COMPANY, &id, &new_secret)
            .await
            .status,
        200
    );
    let stale = call(
        &w.admin,
        "POST",
        &path,
        Some(&w.token),
        None,
        Some(&read.etag()),
    )
    .await;
    assert_eq!(stale.status, 412);

    // Lifetimes follow the settings.
    let mut settings = w.get(&format!("/clients/{id}")).await;
    // Written as a whole float, as JSON Schema lets a client write an integer.
    settings.body["access_token_ttl"] = json!(120.0);
    let etag = settings.etag();
    let replaced = w
        .put(&format!("/clients/{id}"), settings.body.clone(), &etag)
        .await;
    assert_eq!(replaced.status, 200, "{:?}", replaced.body);
    let token = client_token(&w.auth, COMPANY, &id, &new_secret).await;
    assert_eq!(token.body["expires_in"], 120);
    assert_eq!(
        w.put(&format!("/clients/{id}"), settings.body.clone(), &etag)
            .await
            .status,
        412
    );
    // A body refused on its own is 400 whatever its precondition (RFC 9110, section 13.2.1).
    settings.body["scopes"] = json!(["no such scope"]);
    let refused = w.put(&format!("/clients/{id}"), settings.body, &etag).await;
    assert_eq!(
        (refused.status, refused.body["field"].as_str()),
        (400, Some("scopes[0]"))
    );

    assert_eq!(w.delete(&format!("/clients/{id}"), &etag).await.status, 412);
    assert_eq!(
        w.delete(&format!("/clients/{id}"), &replaced.etag())
            .await
            .status,
        204
    );
    assert_eq!(w.get(&format!("/clients/{id}")).await.status, 404);
    assert_eq!(
        client_token(&w.auth, COMPANY, &id, &new_secret)
            .await
            .status,
        401
    );
}

async fn grants_redirects_and_the_refresh_token_setting_apply_at_the_token_service(
    backend: Backend,
) {
    let w = World::new(backend).await;
    let created = w
        .post(
            "/clients",
            json!({"name": "web app", "grant_types": ["authorization_code", "refresh_token"],
                   "redirect_uris": [REDIRECT_URI], "issue_refresh_token": false,
                   "refresh_token_ttl": 7200}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let id = created.body["client_id"].as_str().unwrap().to_string();
    let secret = created.body["client_secret"].as_str().unwrap().to_string();
    assert_eq!(created.body["refresh_token_ttl"], 7200);

    let refresh = [("scope", "refreshToken")];
    let tokens = code_flow(&w.auth, COMPANY, &id, &secret, ROOT, PASSWORD, &refresh)
        .await
        .unwrap();
    assert!(
        tokens.get("refresh_token").is_none(),
        "Issue Refresh Token is off: {tokens}"
    );
    assert_eq!(
        client_token(&w.auth, COMPANY, &id, &secret).await.status,
        400,
        "client_credentials is not among the grants"
    );

    let mut settings = w.get(&format!("/clients/{id}")).await;
    settings.body["issue_refresh_token"] = json!(true);
    let etag = settings.etag();
    let on = w.put(&format!("/clients/{id}"), settings.body, &etag).await;
    assert_eq!(on.status, 200, "{:?}", on.body);
    assert_eq!(on.body["issue_refresh_token"], true);
    let tokens = code_flow(&w.auth, COMPANY, &id, &secret, ROOT, PASSWORD, &refresh)
        .await
        .unwrap();
    assert!(tokens["refresh_token"].is_string(), "{tokens}");

    // A redirect URI that is not registered is refused by the token service.
    let other = code_flow(
        &w.auth,
        COMPANY,
        &id,
        &secret,
        ROOT,
        PASSWORD,
        &[("redirect_uri", "http://127.0.0.1:9/elsewhere")],
    )
    .await;
    assert!(other.is_err());
}

async fn client_settings_are_validated_field_by_field(backend: Backend) {
    let w = World::new(backend).await;
    let base = json!({"name": "c", "grant_types": ["authorization_code"],
                      "redirect_uris": ["https://app.example.com/cb"]});
    let with = |k: &str, v: serde_json::Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    let cases = [
        (with("name", json!("")), "name"),
        (with("grant_types", json!([])), "grant_types"),
        (
            with("grant_types", json!(["authorization_code", "password"])),
            "grant_types[1]",
        ),
        (with("redirect_uris", json!([])), "redirect_uris"),
        (
            with("redirect_uris", json!(["not a url"])),
            "redirect_uris[0]",
        ),
        (
            with("redirect_uris", json!(["https://a.example/cb#frag"])),
            "redirect_uris[0]",
        ),
        (
            with("issue_refresh_token", json!(true)),
            "issue_refresh_token",
        ),
        (with("access_token_ttl", json!(10)), "access_token_ttl"),
        (with("access_token_ttl", json!("long")), "access_token_ttl"),
        (with("access_token_ttl", json!(120.5)), "access_token_ttl"),
        (with("refresh_token_ttl", json!(5)), "refresh_token_ttl"),
        (
            with("refresh_token_ttl", json!(i64::MAX)),
            "refresh_token_ttl",
        ),
        (
            with("redirect_uris", json!(["http://app.example.com/cb"])),
            "redirect_uris[0]",
        ),
        (
            with("redirect_uris", json!(["https://me:pw@app.example.com/cb"])),
            "redirect_uris[0]",
        ),
        (
            with(
                "redirect_uris",
                json!(["https://app.example.com/cb", "https://app.example.com/cb"]),
            ),
            "redirect_uris[1]",
        ),
        (
            with("scopes", json!(["analytics:read", "analytics:read"])),
            "scopes[1]",
        ),
        (with("scopes", json!(["admin:all"])), "scopes[0]"),
        (with("secret", json!("mine")), "secret"),
        (
            json!({"name": "p", "public": true, "grant_types": ["client_credentials"]}),
            "grant_types",
        ),
    ];
    for (body, field) in cases {
        let a = w.post("/clients", body.clone()).await;
        assert_eq!(a.status, 400, "{body}: {:?}", a.body);
        assert_eq!(a.field(), field, "{body}");
    }
    // Plain http only to this machine; an application's own scheme for a native one.
    for uri in [
        "http://localhost:3000/callback",
        "http://127.0.0.1:9/cb",
        "http://[::1]:8080/cb",
        "com.example.app:/oauth/cb",
    ] {
        let a = w
            .post("/clients", with("redirect_uris", json!([uri])))
            .await;
        assert_eq!(a.status, 201, "{uri}: {:?}", a.body);
    }
    let public = w
        .post(
            "/clients",
            json!({"name": "spa", "public": true, "grant_types": ["authorization_code"],
                   "redirect_uris": ["https://spa.example.com/cb"]}),
        )
        .await;
    assert_eq!(public.status, 201);
    assert!(public.body["client_secret"].is_null());
    let id = public.body["client_id"].as_str().unwrap();
    let rotate = call(
        &w.admin,
        "POST",
        &format!("/clients/{id}/secret"),
        Some(&w.token),
        None,
        Some(&public.etag()),
    )
    .await;
    assert_eq!(rotate.status, 400, "a public client has no secret");
    let mut flip = w.get(&format!("/clients/{id}")).await.body;
    flip["public"] = json!(false);
    let a = w.put(&format!("/clients/{id}"), flip, &public.etag()).await;
    assert_eq!((a.status, a.field()), (400, "public"));
}

/// Rotations racing with the same If-Match: one wins, the others get 412, and the one secret shown works.
async fn rotations_at_once_with_one_etag_give_one_secret(backend: Backend) {
    let w = World::new(backend).await;
    let made = w
        .post(
            "/clients",
            json!({"name": "batch", "grant_types": ["client_credentials"],
                   "scopes": ["analytics:read"]}),
        )
        .await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    let id = made.body["client_id"].as_str().unwrap().to_string();
    let path = format!("/clients/{id}/secret");
    let etag = made.etag();
    let answers = futures_util::future::join_all(
        (0..20).map(|_| call(&w.admin, "POST", &path, Some(&w.token), None, Some(&etag))),
    )
    .await;
    let won: Vec<&Answer> = answers.iter().filter(|a| a.status == 200).collect();
    assert_eq!(
        won.len(),
        1,
        "{:?}",
        answers.iter().map(|a| a.status).collect::<Vec<_>>()
    );
    assert!(answers.iter().all(|a| a.status == 200 || a.status == 412));
    let secret = won[0].body["client_secret"].as_str().unwrap();
    let token = reqwest::Client::new()
        .post(w.auth.token_url(COMPANY))
        .basic_auth(&id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(token.status(), 200, "the secret shown works");
}

common::backend_tests!(
    rotations_at_once_with_one_etag_give_one_secret,
    a_client_secret_is_shown_once_and_rotates,
    grants_redirects_and_the_refresh_token_setting_apply_at_the_token_service,
    client_settings_are_validated_field_by_field,
);
