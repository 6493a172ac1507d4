//! PKCE (RFC 7636): required of public clients, S256 only, and binding on confidential clients that use it.

use crate::support::*;

/// An RFC 7636 verifier (43 to 128 unreserved characters) and its S256 challenge.
fn pkce_pair(seed: &str) -> (String, String) {
    let verifier = format!("{seed}-{}", "v".repeat(60));
    let challenge = sha256_b64(&verifier);
    (verifier, challenge)
}

async fn public_setup(backend: Backend) -> Setup {
    let spec = ClientSpec {
        public: true,
        ..full_client_spec()
    };
    let s = setup_with(TestAuth::start(backend).await, spec).await;
    assert!(s.secret.is_empty(), "a public client has no secret");
    s
}

/// The error an authorization request is redirected back with.
async fn refused(s: &Setup, query: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    let response = browser()
        .get(authorize_url(&s.auth, &s.client_id, query))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 302, "{query:?}");
    let to = location(response.headers()).expect("redirected");
    assert!(to.starts_with(REDIRECT_URI), "{to}");
    let query = query_of(&to);
    assert!(!query.contains_key("code"));
    query
}

async fn a_public_client_must_send_an_s256_challenge(backend: Backend) {
    let s = public_setup(backend).await;
    let (_, challenge) = pkce_pair("a");

    let query = refused(&s, &[]).await;
    assert_eq!(query["error"], "invalid_request");
    assert_eq!(query["state"], "st-123");

    for method in [
        &[
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "plain"),
        ][..],
        &[("code_challenge", challenge.as_str())][..],
    ] {
        let query = refused(&s, method).await;
        assert_eq!(query["error"], "invalid_request", "{method:?}");
    }

    let query = refused(
        &s,
        &[
            ("code_challenge", "too-short"),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
    assert_eq!(query["error"], "invalid_request");

    // The same challenge with S256 is accepted.
    authorize(
        &s.auth,
        &s.client_id,
        &[
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
        ],
    )
    .await;
}

async fn a_public_client_redeems_its_code_with_the_verifier_alone(backend: Backend) {
    let s = public_setup(backend).await;
    let (verifier, challenge) = pkce_pair("b");
    let query = [
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("scope", "refreshToken openid"),
    ];
    let (wrong_verifier, _) = pkce_pair("c");
    let cases: [(&[(&str, &str)], &str); 2] = [
        (&[], "no verifier"),
        (
            &[("code_verifier", wrong_verifier.as_str())],
            "wrong verifier",
        ),
    ];
    for (extra, what) in cases {
        let code = authorize(&s.auth, &s.client_id, &query).await.code;
        let mut form = vec![("redirectURI", REDIRECT_URI)];
        form.extend_from_slice(extra);
        let (status, body, _) = exchange(&s.auth, &s.client_id, None, &code, &form).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant")),
            "{what}"
        );
    }

    let code = authorize(&s.auth, &s.client_id, &query).await.code;
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        None,
        &code,
        &[
            ("redirectURI", REDIRECT_URI),
            ("code_verifier", verifier.as_str()),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "refreshToken openid");
    let claims = s
        .auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(claims.client_id, s.client_id);
    assert_eq!(claims.sub, s.user.id);

    // A public client has no credentials for the client-credentials grant.
    let (status, body, _) = token_form(
        &s.auth,
        "acme",
        &[
            ("grant_type", "client_credentials"),
            ("client_id", s.client_id.as_str()),
        ],
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"], "unauthorized_client");
}

async fn a_confidential_client_that_sent_a_challenge_needs_the_verifier(backend: Backend) {
    let s = setup(backend).await;
    let (verifier, challenge) = pkce_pair("d");
    let query = [
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let code = authorize(&s.auth, &s.client_id, &query).await.code;
    let (status, body, _) = exchange_code(&s, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "the secret does not replace the verifier"
    );

    let code = authorize(&s.auth, &s.client_id, &query).await.code;
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &code,
        &[
            ("redirectURI", REDIRECT_URI),
            ("code_verifier", verifier.as_str()),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // A verifier for a code that had no challenge is refused too.
    let code = authorize(&s.auth, &s.client_id, &[]).await.code;
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &code,
        &[
            ("redirectURI", REDIRECT_URI),
            ("code_verifier", verifier.as_str()),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
}

common::backend_tests!(
    a_public_client_must_send_an_s256_challenge,
    a_public_client_redeems_its_code_with_the_verifier_alone,
    a_confidential_client_that_sent_a_challenge_needs_the_verifier,
);
