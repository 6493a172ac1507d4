//! The shared JWT verifier (common::jwt) against the real token service: expiry, token type, issuer,
//! and the `Authenticated` extractor of the resource services.

use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use common::jwt::{Authenticated, JwtVerifier, VerifierConfig, VerifyError};
use common::testing::loopback_listener;
use directory::ClientSpec;

use crate::support::*;

/// The token with one character of its signature changed (a whole 6-bit symbol, not trailing bits).
fn tamper(token: &str) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    let at = chars.len() - 10;
    chars[at] = if chars[at] == 'Q' { 'g' } else { 'Q' };
    chars.into_iter().collect()
}

async fn client_token(auth: &TestAuth, spec: ClientSpec) -> String {
    auth.add_company("acme").await;
    let (client, secret) = auth.add_client("acme", spec).await;
    let (status, body, _) = token_basic(
        auth,
        "acme",
        &client.client_id,
        &secret.unwrap(),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

async fn expired_tokens_are_refused(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let token = client_token(
        &auth,
        ClientSpec {
            access_token_ttl: 1,
            ..full_client_spec()
        },
    )
    .await;
    let mut config = VerifierConfig::new(&auth.url, &auth.url);
    config.leeway = 0;
    let verifier = JwtVerifier::new(config);
    verifier.verify(&token).await.expect("fresh token verifies");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(
        verifier.verify(&token).await.unwrap_err(),
        VerifyError::Expired,
        "also when remembered"
    );
    let fresh_verifier = JwtVerifier::new({
        let mut c = VerifierConfig::new(&auth.url, &auth.url);
        c.leeway = 0;
        c
    });
    assert_eq!(
        fresh_verifier.verify(&token).await.unwrap_err(),
        VerifyError::Expired
    );
    // By default a service takes a token a few seconds past its expiry, for clocks out of step.
    let tolerant = JwtVerifier::new(VerifierConfig::new(&auth.url, &auth.url));
    assert_eq!(common::jwt::CLOCK_SKEW_SECS, 5);
    tolerant
        .verify(&token)
        .await
        .expect("a second past its expiry, within the clock skew");
}

async fn a_token_verified_again_costs_no_signature_check(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let token = client_token(&auth, full_client_spec()).await;
    let verifier = auth.verifier();
    for _ in 0..5 {
        assert_eq!(verifier.verify(&token).await.unwrap().company, "acme");
    }
    assert_eq!(verifier.signature_checks(), 1);
    let tampered = tamper(&token);
    assert!(verifier.verify(&tampered).await.is_err());
    assert_eq!(
        verifier.signature_checks(),
        2,
        "a different token is checked"
    );
}

async fn tokens_of_another_issuer_or_audience_are_refused(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let token = client_token(&auth, full_client_spec()).await;
    let elsewhere = JwtVerifier::new(VerifierConfig::new(&auth.url, "https://auth.other.example"));
    assert_eq!(
        elsewhere.verify(&token).await.unwrap_err(),
        VerifyError::UnknownIssuer
    );
    let mut config = VerifierConfig::new(&auth.url, &auth.url);
    config.audience = "another-api".into();
    assert!(matches!(
        JwtVerifier::new(config).verify(&token).await,
        Err(VerifyError::Invalid(_))
    ));
    assert_eq!(
        auth.verifier().verify("not.a.jwt").await.unwrap_err(),
        VerifyError::Malformed
    );
}

async fn the_extractor_answers_401_without_a_valid_token(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let token = client_token(&auth, full_client_spec()).await;
    let verifier = web::Data::new(auth.verifier());
    let (listener, url) = loopback_listener();
    let server = HttpServer::new(move || {
        App::new().app_data(verifier.clone()).route(
            "/whoami",
            web::get().to(|caller: Authenticated| async move {
                HttpResponse::Ok()
                    .json(serde_json::json!({"company": caller.company, "scope": caller.scope}))
            }),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    let http = reqwest::Client::new();

    let (status, body, _) = read(
        http.get(format!("{url}/whoami"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["company"], "acme");

    let (status, body, headers) =
        read(http.get(format!("{url}/whoami")).send().await.unwrap()).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("missing_token"))
    );
    assert_eq!(headers["www-authenticate"], "Bearer");

    let tampered = tamper(&token);
    let (status, body, headers) = read(
        http.get(format!("{url}/whoami"))
            .bearer_auth(tampered)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("invalid_token"))
    );
    assert!(headers["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("invalid_token"));
}

common::backend_tests!(
    expired_tokens_are_refused,
    a_token_verified_again_costs_no_signature_check,
    tokens_of_another_issuer_or_audience_are_refused,
    the_extractor_answers_401_without_a_valid_token,
);
