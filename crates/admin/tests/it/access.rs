//! Who may call: 401 without a valid token, 403 for client-credentials tokens, accounts without API access,
//! blocked or inactive accounts; and a company's token never reaches another company.

use base64::Engine;
use serde_json::json;

use crate::support::*;

async fn requests_without_a_valid_token_are_401(backend: Backend) {
    let w = World::new(backend).await;
    let none = call(&w.admin, "GET", "/users", None, None, None).await;
    assert_eq!((none.status, none.code()), (401, "missing_token"));
    assert_eq!(none.header("www-authenticate").unwrap(), "Bearer");

    let garbage = call(&w.admin, "GET", "/users", Some("not-a-jwt"), None, None).await;
    assert_eq!((garbage.status, garbage.code()), (401, "invalid_token"));
    assert!(garbage
        .header("www-authenticate")
        .unwrap()
        .contains("invalid_token"));

    // A token whose claims were edited (moved to another company) fails its signature check.
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts: Vec<String> = w.token.split('.').map(str::to_string).collect();
    let mut claims: serde_json::Value =
        serde_json::from_slice(&engine.decode(&parts[1]).unwrap()).unwrap();
    claims["scope"] = json!("everything");
    parts[1] = engine.encode(claims.to_string());
    let forged = parts.join(".");
    let a = call(&w.admin, "GET", "/users", Some(&forged), None, None).await;
    assert_eq!(a.status, 401);

    // An ID token is not an access token.
    let tokens = code_flow(
        &w.auth,
        COMPANY,
        &w.client_id,
        &w.secret,
        ROOT,
        PASSWORD,
        &[],
    )
    .await
    .unwrap();
    let id_token = tokens["id_token"].as_str().unwrap();
    let a = call(&w.admin, "GET", "/users", Some(id_token), None, None).await;
    assert_eq!(a.status, 401);

    // The same token, verified again (from the verifier's cache), still works.
    for _ in 0..3 {
        assert_eq!(w.get("/users/root").await.status, 200);
    }
}

async fn only_user_accounts_with_api_access_and_in_good_standing_get_in(backend: Backend) {
    let w = World::new(backend).await;
    let cc = client_token(&w.auth, COMPANY, &w.client_id, &w.secret).await;
    let cc = cc.body["access_token"].as_str().unwrap().to_string();
    let a = call(&w.admin, "GET", "/users", Some(&cc), None, None).await;
    assert_eq!((a.status, a.code()), (403, "forbidden"), "{:?}", a.body);

    // Same role as root, but no API access.
    let mut body = user_body("noapi");
    body["password"] = json!("a long enough password");
    w.create_user(body).await;
    let token = w.token_of("noapi", "a long enough password").await;
    let a = call(&w.admin, "GET", "/users", Some(&token), None, None).await;
    assert_eq!((a.status, a.code()), (403, "api_access_disabled"));
    let user = w.get("/users/noapi").await;
    let mut record = user.body.clone();
    record["api_access"] = json!(true);
    assert_eq!(
        w.put("/users/noapi", record, &user.etag()).await.status,
        200
    );
    let a = call(&w.admin, "GET", "/users", Some(&token), None, None).await;
    assert_eq!(a.status, 200, "API access granted: {:?}", a.body);

    // Inactive: refused, although the token is still unexpired; deactivating revoked it.
    let user = w.get("/users/noapi").await;
    let mut record = user.body.clone();
    record["status"] = json!("INACTIVE");
    assert_eq!(
        w.put("/users/noapi", record, &user.etag()).await.status,
        200
    );
    let a = call(&w.admin, "GET", "/users", Some(&token), None, None).await;
    assert_eq!((a.status, a.code()), (401, "invalid_token"));

    // Deleted: the token no longer names an account.
    let user = w.get("/users/noapi").await;
    assert_eq!(w.delete("/users/noapi", &user.etag()).await.status, 204);
    let a = call(&w.admin, "GET", "/users", Some(&token), None, None).await;
    assert_eq!((a.status, a.code()), (401, "invalid_token"));
}

async fn a_token_of_one_company_never_reaches_another(backend: Backend) {
    let w = World::new(backend).await;
    let mut bob = user_body("bob");
    bob["first_name"] = json!("Acme Bob");
    w.create_user(bob).await;
    let acme_client = w
        .post(
            "/clients",
            json!({"name": "acme only", "grant_types": ["client_credentials"]}),
        )
        .await;
    let acme_client_id = acme_client.body["client_id"].as_str().unwrap().to_string();
    w.post("/roles", json!({"name": "AcmeRole"})).await;

    let globex = w.other_company("globex").await;
    let as_globex = |method: &'static str,
                     path: String,
                     body: Option<serde_json::Value>,
                     tag: Option<&'static str>| {
        let token = globex.clone();
        let admin = &w.admin;
        async move { call(admin, method, &path, Some(&token), body, tag).await }
    };

    assert_eq!(
        as_globex("GET", "/users/bob".into(), None, None)
            .await
            .status,
        404
    );
    let list = as_globex("GET", "/users".into(), None, None).await;
    let names: Vec<&str> = list.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["root"], "only globex's own users");
    let put = as_globex(
        "PUT",
        "/users/bob".into(),
        Some(user_body("bob")),
        Some("W/\"1\""),
    )
    .await;
    assert_eq!(put.status, 404);
    assert_eq!(
        as_globex("DELETE", "/users/bob".into(), None, Some("W/\"1\""))
            .await
            .status,
        404
    );
    assert_eq!(w.get("/users/bob").await.body["first_name"], "Acme Bob");

    assert_eq!(
        as_globex("GET", "/roles/AcmeRole".into(), None, None)
            .await
            .status,
        404
    );
    assert_eq!(
        as_globex("GET", format!("/clients/{acme_client_id}"), None, None)
            .await
            .status,
        404
    );
    let rotate = as_globex(
        "POST",
        format!("/clients/{acme_client_id}/secret"),
        None,
        Some("W/\"1\""),
    )
    .await;
    assert_eq!(rotate.status, 404);
    let clients = as_globex("GET", "/clients".into(), None, None).await;
    assert!(!clients.body.to_string().contains(&acme_client_id));

    // A user created by globex lives in globex, even with the same name as an acme user.
    let created = as_globex("POST", "/users".into(), Some(user_body("bob")), None).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(w.get("/users/bob").await.body["first_name"], "Acme Bob");

    // A globex role cannot be given to an acme user: roles are looked up in the caller's company.
    as_globex(
        "POST",
        "/roles".into(),
        Some(json!({"name": "GlobexRole"})),
        None,
    )
    .await;
    let mut body = user_body("mixed");
    body["roles"] = json!({"primary_role": {"role": "GlobexRole"}});
    let a = w.post("/users", body).await;
    assert_eq!((a.status, a.field()), (404, "roles.primary_role.role"));

    let audit = as_globex("GET", "/audit".into(), None, None).await;
    let entries = audit.body["items"].as_array().unwrap();
    assert!(!entries.is_empty());
    assert!(entries
        .iter()
        .all(|e| e["resource_id"] != "AcmeRole" && e["resource_id"] != acme_client_id.as_str()));
}

async fn a_token_the_token_service_revoked_is_401(backend: Backend) {
    let w = World::new(backend).await;
    // Exchanging one code twice makes the token service revoke the access token of the first exchange.
    let redirected = w
        .auth
        .log_in(&browser(), COMPANY, &w.client_id, ROOT, PASSWORD, &[])
        .await
        .expect("root logs in");
    let exchange = || {
        reqwest::Client::new()
            .post(w.auth.token_url(COMPANY))
            .form(&[
                ("grant_type", "authorization_code"),
                ("client_id", w.client_id.as_str()),
                ("client_secret", w.secret.as_str()),
                ("code", redirected.code.as_str()),
                ("redirectURI", REDIRECT_URI),
            ])
            .send()
    };
    let first = read(exchange().await.unwrap()).await;
    assert_eq!(first.status, 200);
    let token = first.body["access_token"].as_str().unwrap().to_string();
    let ok = call(&w.admin, "GET", "/users", Some(&token), None, None).await;
    assert_eq!(ok.status, 200);
    let replay = read(exchange().await.unwrap()).await;
    assert_eq!(replay.status, 400);
    let a = call(&w.admin, "GET", "/users", Some(&token), None, None).await;
    assert_eq!((a.status, a.code()), (401, "invalid_token"), "{:?}", a.body);
}

/// A revoked token is 401 whatever its kind: the revocation is checked for tokens that could never use
/// the administration API too (a client-credentials token, otherwise 403), and for tokens whose account
/// is read in the same statement as the revocation.
async fn a_revoked_token_is_401_whatever_its_kind(backend: Backend) {
    let w = World::new(backend).await;
    let cc = client_token(&w.auth, COMPANY, &w.client_id, &w.secret).await;
    let cc = cc.body["access_token"].as_str().unwrap().to_string();
    let user = w.token_of(ROOT, PASSWORD).await;
    for token in [&cc, &user] {
        let before = call(&w.admin, "GET", "/users", Some(token), None, None).await;
        assert_ne!(before.status, 401, "{:?}", before.body);
        w.revoke(token).await;
        let after = call(&w.admin, "GET", "/users", Some(token), None, None).await;
        assert_eq!(
            (after.status, after.code()),
            (401, "invalid_token"),
            "{:?}",
            after.body
        );
    }
}

common::backend_tests!(
    a_revoked_token_is_401_whatever_its_kind,
    requests_without_a_valid_token_are_401,
    a_token_the_token_service_revoked_is_401,
    only_user_accounts_with_api_access_and_in_good_standing_get_in,
    a_token_of_one_company_never_reaches_another,
);
