//! The client-credentials grant: response shape, client authentication and its failures, tenancy.

use crate::support::*;
use directory::{grants, ClientSpec};

async fn setup(backend: Backend) -> (TestAuth, String, String) {
    let auth = TestAuth::start(backend).await;
    auth.add_company("acme").await;
    let (client, secret) = auth.add_client("acme", full_client_spec()).await;
    (auth, client.client_id, secret.unwrap())
}

async fn issues_a_bearer_token_with_exactly_the_spec_fields(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    let (status, body, headers) = token_basic(
        &auth,
        "acme",
        &id,
        &secret,
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(keys(&body), ["access_token", "expires_in", "token_type"]);
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(headers["cache-control"], "no-store");

    let claims = auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .expect("verifies");
    assert_eq!(claims.company, "acme");
    assert_eq!(claims.client_id, id);
    assert_eq!(claims.sub, id);
    assert_eq!(claims.iss, auth.issuer("acme"));
    assert_eq!(claims.exp - claims.iat, 3600);
    assert!(
        claims.has_scope("analytics:read")
            && claims.has_scope("analytics:write")
            && claims.has_scope("events:read")
    );
    assert!(!claims.is_user_token());
}

async fn client_secret_post_is_accepted_but_not_two_methods_at_once(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", id.as_str()),
        ("client_secret", secret.as_str()),
    ];
    let (status, body, _) = token_form(&auth, "acme", &form).await;
    assert_eq!(status, 200, "{body}");

    let (status, body, _) = token_basic(&auth, "acme", &id, &secret, &form[..]).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "invalid_request");
}

/// The credentials may be sent as `clientId` and `clientSecret` (docs/token-service.md): the form fields' second
/// spelling at the token endpoint and wherever a client authenticates, never both spellings of one field.
async fn client_id_and_secret_are_accepted_as_clientid_and_clientsecret(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    let (status, body, _) = token_form(
        &auth,
        "acme",
        &[
            ("grant_type", "client_credentials"),
            ("clientId", id.as_str()),
            ("clientSecret", secret.as_str()),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let claims = auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .expect("verifies");
    assert_eq!(claims.client_id, id);

    let wrong = format!("{secret}x");
    let (status, body, headers) = token_form(
        &auth,
        "acme",
        &[
            ("grant_type", "client_credentials"),
            ("clientId", id.as_str()),
            ("clientSecret", wrong.as_str()),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    assert!(headers.contains_key("www-authenticate"));

    // The spellings mix (one of each field), but one field in both spellings is refused, even alike.
    let (status, body, _) = token_form(
        &auth,
        "acme",
        &[
            ("grant_type", "client_credentials"),
            ("client_id", id.as_str()),
            ("clientSecret", secret.as_str()),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    for (both, other) in [
        (
            [("client_id", id.as_str()), ("clientId", id.as_str())],
            ("client_secret", secret.as_str()),
        ),
        (
            [
                ("client_secret", secret.as_str()),
                ("clientSecret", secret.as_str()),
            ],
            ("client_id", id.as_str()),
        ),
    ] {
        let mut form = vec![("grant_type", "client_credentials"), other];
        form.extend_from_slice(&both);
        let (status, body, _) = token_form(&auth, "acme", &form).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_request")),
            "{form:?}: {body}"
        );
    }
    // With HTTP Basic, a form secret under either spelling is a second method.
    let (status, body, _) = token_basic(
        &auth,
        "acme",
        &id,
        &secret,
        &[
            ("grant_type", "client_credentials"),
            ("clientSecret", secret.as_str()),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );
    // Introspection authenticates the same way.
    let access = {
        let (_, body, _) = token_basic(
            &auth,
            "acme",
            &id,
            &secret,
            &[("grant_type", "client_credentials")],
        )
        .await;
        body["access_token"].as_str().unwrap().to_string()
    };
    let response = reqwest::Client::new()
        .post(format!("{}/introspect", auth.issuer("acme")))
        .form(&[
            ("token", access.as_str()),
            ("clientId", id.as_str()),
            ("clientSecret", secret.as_str()),
        ])
        .send()
        .await
        .unwrap();
    let (status, body, _) = read(response).await;
    assert_eq!(
        (status, &body["active"]),
        (200, &serde_json::json!(true)),
        "{body}"
    );
}

async fn bad_client_authentication_is_401_with_www_authenticate(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    let wrong_secret = format!("{secret}x");
    for (who, pass) in [
        (id.as_str(), wrong_secret.as_str()),
        ("no-such-client", secret.as_str()),
        (id.as_str(), ""),
    ] {
        let (status, body, headers) = token_basic(
            &auth,
            "acme",
            who,
            pass,
            &[("grant_type", "client_credentials")],
        )
        .await;
        assert_eq!(status, 401, "{who}: {body}");
        assert_eq!(body["error"], "invalid_client");
        assert_eq!(headers["www-authenticate"], "Basic realm=\"acme\"");
        assert!(
            !body.to_string().contains(&secret),
            "errors never echo secrets"
        );
    }
    let (status, body, _) =
        token_form(&auth, "acme", &[("grant_type", "client_credentials")]).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"], "invalid_client");
}

async fn a_client_of_one_company_is_unknown_to_another(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    auth.add_company("globex").await;
    let (status, body, _) = token_basic(
        &auth,
        "globex",
        &id,
        &secret,
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(body["error"], "invalid_client");

    // A token of acme does not verify as anything but acme's, and a forged company claim breaks it.
    let (_, body, _) = token_basic(
        &auth,
        "acme",
        &id,
        &secret,
        &[("grant_type", "client_credentials")],
    )
    .await;
    let token = body["access_token"].as_str().unwrap();
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut claims: serde_json::Value =
        serde_json::from_slice(&engine.decode(&parts[1]).unwrap()).unwrap();
    claims["company"] = "globex".into();
    claims["iss"] = auth.issuer("globex").into();
    parts[1] = engine.encode(claims.to_string());
    let forged = parts.join(".");
    assert!(
        auth.verifier().verify(&forged).await.is_err(),
        "a token moved to another company must not verify"
    );
}

async fn grants_the_client_is_not_allowed_are_refused(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    auth.add_company("acme").await;
    let spec = ClientSpec {
        grant_types: vec![grants::AUTHORIZATION_CODE.into()],
        ..full_client_spec()
    };
    let (client, secret) = auth.add_client("acme", spec).await;
    let (status, body, _) = token_basic(
        &auth,
        "acme",
        &client.client_id,
        &secret.unwrap(),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "unauthorized_client");
}

async fn malformed_requests_get_rfc6749_errors(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    let (status, body, _) =
        token_basic(&auth, "acme", &id, &secret, &[("grant_type", "password")]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );

    let (status, body, _) = token_basic(&auth, "acme", &id, &secret, &[]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );

    let (status, body, _) = token_basic(
        &auth,
        "acme",
        &id,
        &secret,
        &[
            ("grant_type", "client_credentials"),
            ("grant_type", "client_credentials"),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request")),
        "repeated parameters are refused"
    );

    let response = reqwest::Client::new()
        .post(auth.token_url("acme"))
        .basic_auth(&id, Some(&secret))
        .json(&serde_json::json!({"grant_type": "client_credentials"}))
        .send()
        .await
        .unwrap();
    let (status, body, _) = read(response).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request")),
        "JSON bodies are refused"
    );
}

/// A field's two spellings are checked where the endpoint reads the field, in the endpoint's order: after
/// the grant type, client id before client secret, and not at all by a grant that does not read it.
async fn both_spellings_are_refused_where_the_field_is_read(backend: Backend) {
    let (auth, id, secret) = setup(backend).await;
    let mut form = vec![
        ("grant_type", "password"),
        ("client_secret", secret.as_str()),
        ("clientSecret", secret.as_str()),
        ("client_id", id.as_str()),
        ("clientId", id.as_str()),
    ];
    let (_, body, _) = token_form(&auth, "acme", &form).await;
    assert_eq!(body["error"], "unsupported_grant_type", "{body}");
    form[0].1 = "client_credentials";
    let (_, body, _) = token_form(&auth, "acme", &form).await;
    assert_eq!(
        body["error_description"], "send client_id or clientId, not both",
        "{body}"
    );
    let form = [
        ("grant_type", "client_credentials"),
        ("redirectURI", REDIRECT_URI),
        ("redirect_uri", REDIRECT_URI),
    ];
    let (status, body, _) = token_basic(&auth, "acme", &id, &secret, &form).await;
    assert_eq!(status, 200, "{body}");
}

async fn lifetime_and_scope_follow_the_client(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    auth.add_company("acme").await;
    let spec = ClientSpec {
        access_token_ttl: 120,
        ..full_client_spec()
    };
    let (client, secret) = auth.add_client("acme", spec).await;
    let secret = secret.unwrap();
    let form = [
        ("grant_type", "client_credentials"),
        ("scope", "analytics:read"),
    ];
    let (status, body, _) = token_basic(&auth, "acme", &client.client_id, &secret, &form).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["expires_in"], 120);
    let claims = auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(claims.exp - claims.iat, 120);
    assert_eq!(claims.scope, "analytics:read");

    let form = [
        ("grant_type", "client_credentials"),
        ("scope", "admin:everything"),
    ];
    let (status, body, _) = token_basic(&auth, "acme", &client.client_id, &secret, &form).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_scope"))
    );
}

common::backend_tests!(
    issues_a_bearer_token_with_exactly_the_spec_fields,
    client_secret_post_is_accepted_but_not_two_methods_at_once,
    client_id_and_secret_are_accepted_as_clientid_and_clientsecret,
    bad_client_authentication_is_401_with_www_authenticate,
    a_client_of_one_company_is_unknown_to_another,
    grants_the_client_is_not_allowed_are_refused,
    malformed_requests_get_rfc6749_errors,
    both_spellings_are_refused_where_the_field_is_read,
    lifetime_and_scope_follow_the_client,
);
