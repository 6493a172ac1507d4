//! Token introspection (RFC 7662), revocation (RFC 7009) and the userinfo endpoint.

use crate::support::*;

async fn client_credentials_token(s: &Setup) -> String {
    let (status, body, _) = token_basic(
        &s.auth,
        "acme",
        &s.client_id,
        &s.secret,
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

async fn userinfo(auth: &TestAuth, company: &str, token: &str) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .get(format!("{}/userinfo", auth.issuer(company)))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let (status, body, _) = read(response).await;
    (status, body)
}

async fn an_access_token_is_active_with_its_claims(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[]).await;
    let access = body["access_token"].as_str().unwrap();
    let (status, body) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
    assert_eq!(status, 200);
    assert_eq!(body["active"], true, "{body}");
    assert_eq!(
        body["scope"],
        "refreshToken openid email profile phone address admin"
    );
    assert_eq!(body["client_id"], s.client_id);
    assert_eq!(body["sub"], s.user.id);
    assert_eq!(body["username"], USERNAME);
    assert_eq!(body["iss"], s.auth.issuer("acme"));
    assert!(body["token_type"].is_string(), "{body}");
    let claims = jwt_claims(access);
    assert_eq!(body["jti"], claims["jti"]);
    assert_eq!(body["exp"], claims["exp"]);
    assert_eq!(body["iat"], claims["iat"]);
    assert_eq!(
        body["exp"].as_i64().unwrap() - body["iat"].as_i64().unwrap(),
        3600
    );

    // A client-credentials token, asked about by another client of the company.
    let cc = client_credentials_token(&s).await;
    let (other, other_secret) = s.auth.add_client("acme", full_client_spec()).await;
    let (_, body) = introspect(&s.auth, &other.client_id, &other_secret.unwrap(), &cc).await;
    assert_eq!(body["active"], true, "{body}");
    assert_eq!(body["client_id"], s.client_id);
    assert_eq!(body["sub"], s.client_id);
    assert!(body.get("username").is_none());
}

async fn anything_else_is_inactive(backend: Backend) {
    let s = setup(backend).await;
    let access = client_credentials_token(&s).await;
    // One character in the middle of the signature changed.
    let mut tampered = access.clone().into_bytes();
    let at = tampered.len() - 5;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let id_token = tokens(&s, &[]).await["id_token"]
        .as_str()
        .unwrap()
        .to_string();
    for token in ["garbage", "a.b.c", tampered.as_str(), id_token.as_str()] {
        let (status, body) = introspect(&s.auth, &s.client_id, &s.secret, token).await;
        assert_eq!(status, 200);
        assert_eq!(body, serde_json::json!({"active": false}), "{token}");
    }

    // A token of another company is not active here.
    s.auth.add_company("globex").await;
    let (client, secret) = s.auth.add_client("globex", full_client_spec()).await;
    let (_, body, _) = token_basic(
        &s.auth,
        "globex",
        &client.client_id,
        secret.as_deref().unwrap(),
        &[("grant_type", "client_credentials")],
    )
    .await;
    let globex = body["access_token"].as_str().unwrap();
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, globex).await;
    assert_eq!(body, serde_json::json!({"active": false}));
}

async fn introspection_needs_client_authentication(backend: Backend) {
    let s = setup(backend).await;
    let access = client_credentials_token(&s).await;
    let url = format!("{}/introspect", s.auth.issuer("acme"));
    let response = reqwest::Client::new()
        .post(&url)
        .form(&[("token", access.as_str())])
        .send()
        .await
        .unwrap();
    let (status, body, headers) = read(response).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    assert!(headers.contains_key("www-authenticate"));
    assert!(
        body.get("active").is_none(),
        "nothing about the token: {body}"
    );

    let response = reqwest::Client::new()
        .post(&url)
        .basic_auth(&s.client_id, Some("wrong"))
        .form(&[("token", access.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    // A public client may not introspect either.
    let (public, _) = s
        .auth
        .add_client(
            "acme",
            ClientSpec {
                public: true,
                ..full_client_spec()
            },
        )
        .await;
    let response = reqwest::Client::new()
        .post(&url)
        .form(&[
            ("token", access.as_str()),
            ("client_id", public.client_id.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

async fn a_revoked_access_token_is_inactive_and_refused_at_userinfo(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[]).await;
    let access = body["access_token"].as_str().unwrap();
    let (status, _) = userinfo(&s.auth, "acme", access).await;
    assert_eq!(status, 200);

    // Another client's revocation request is answered 200 but does nothing.
    let (other, other_secret) = s.auth.add_client("acme", full_client_spec()).await;
    assert_eq!(
        revoke(&s.auth, &other.client_id, &other_secret.unwrap(), access).await,
        200
    );
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
    assert_eq!(body["active"], true);

    assert_eq!(revoke(&s.auth, &s.client_id, &s.secret, access).await, 200);
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
    assert_eq!(body, serde_json::json!({"active": false}));
    let (status, _) = userinfo(&s.auth, "acme", access).await;
    assert_eq!(status, 401);

    // Unknown tokens are answered 200 as RFC 7009 asks.
    assert_eq!(
        revoke(&s.auth, &s.client_id, &s.secret, "garbage").await,
        200
    );
    let response = reqwest::Client::new()
        .post(format!("{}/revoke", s.auth.issuer("acme")))
        .form(&[("token", access)])
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        401,
        "revocation needs client authentication"
    );
}

async fn a_refresh_token_can_be_introspected(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[("scope", "refreshToken")]).await;
    let token = body["refresh_token"].as_str().unwrap();
    let (status, body) = introspect(&s.auth, &s.client_id, &s.secret, token).await;
    assert_eq!(status, 200);
    assert_eq!(body["active"], true, "{body}");
    assert_eq!(body["scope"], "refreshToken");
    assert_eq!(body["client_id"], s.client_id);
    assert_eq!(body["sub"], s.user.id);
    assert_eq!(body["username"], USERNAME);
    assert_eq!(body["iss"], s.auth.issuer("acme"));
    assert!(body.get("exp").is_none(), "unlimited by default: {body}");
    let access = tokens(&s, &[]).await["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, access_body) = introspect(&s.auth, &s.client_id, &s.secret, &access).await;
    assert_ne!(
        body["token_type"], access_body["token_type"],
        "refresh and access tokens are told apart"
    );

    // Once rotated it is no longer active.
    let (status, _, _) = refresh(&s.auth, &s.client_id, &s.secret, token).await;
    assert_eq!(status, 200);
    let (_, body) = introspect(&s.auth, &s.client_id, &s.secret, token).await;
    assert_eq!(body, serde_json::json!({"active": false}));
}

async fn userinfo_returns_the_signed_in_users_claims(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[]).await;
    let access = body["access_token"].as_str().unwrap();
    let (status, body) = userinfo(&s.auth, "acme", access).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["sub"], s.user.id);
    assert_eq!(body["preferred_username"], USERNAME);
    assert_eq!(body["email"], "alice@example.com");

    // POST works as well (OpenID Connect Core 5.3.1).
    let response = reqwest::Client::new()
        .post(format!("{}/userinfo", s.auth.issuer("acme")))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // Without the openid scope there is no userinfo.
    let body = tokens(&s, &[("scope", "refreshToken")]).await;
    let (status, _) = userinfo(&s.auth, "acme", body["access_token"].as_str().unwrap()).await;
    assert_eq!(status, 401);

    let response = reqwest::Client::new()
        .get(format!("{}/userinfo", s.auth.issuer("acme")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401, "no token");
    assert!(response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Bearer"));
}

async fn userinfo_refuses_client_and_foreign_tokens(backend: Backend) {
    let s = setup(backend).await;
    let cc = client_credentials_token(&s).await;
    let (status, body) = userinfo(&s.auth, "acme", &cc).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_token"))
    );

    s.auth.add_company("globex").await;
    let body = tokens(&s, &[]).await;
    let access = body["access_token"].as_str().unwrap();
    let (status, body) = userinfo(&s.auth, "globex", access).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_token"))
    );
    let (status, _) = userinfo(&s.auth, "acme", access).await;
    assert_eq!(status, 200, "the same token at its own company");

    // A user who can no longer sign in gets nothing.
    update_user(&s.auth, USERNAME, |u| u.login_blocked = true).await;
    let (status, _) = userinfo(&s.auth, "acme", access).await;
    assert_eq!(status, 401);
}

async fn userinfo_of_an_unknown_company_generates_no_keys(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[]).await;
    let access = body["access_token"].as_str().unwrap();
    let (status, _) = userinfo(&s.auth, "no-such-company", access).await;
    assert_eq!(status, 401);
    let stored = auth::storage::signing_keys(&s.auth.service.state.db, "no-such-company")
        .await
        .unwrap();
    assert!(
        stored.is_empty(),
        "no signing keys for a company that does not exist"
    );
}

common::backend_tests!(
    an_access_token_is_active_with_its_claims,
    anything_else_is_inactive,
    introspection_needs_client_authentication,
    a_revoked_access_token_is_inactive_and_refused_at_userinfo,
    a_refresh_token_can_be_introspected,
    userinfo_returns_the_signed_in_users_claims,
    userinfo_refuses_client_and_foreign_tokens,
    userinfo_of_an_unknown_company_generates_no_keys,
);
