//! What a caller can make the shared JWT verifier do with tokens it forges: the verifier must not fetch a
//! JWKS per forged token, must not grow without bound, and must not let one company's slow JWKS fetch
//! hold up the others. Runs against the real token service; see docs/decisions.md (tokens) for why each
//! company has its own keys.

use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::jwt::{JwtVerifier, VerifierConfig, VerifyError};
use serde_json::json;
use tokio::task::JoinSet;

use crate::support::*;
use crate::verifier_proxy::StallingProxy;

/// A token that names `company` and its exact issuer under `issuer_base`, with a garbage signature: what
/// an attacker can make without any key.
fn forged(issuer_base: &str, company: &str) -> String {
    let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "forged-kid"});
    let now = now_secs();
    let claims = json!({
        "iss": format!("{issuer_base}/oauth/{company}"),
        "sub": "mallory",
        "aud": "speech-platform",
        "exp": now + 600,
        "iat": now,
        "jti": unique_jti(),
        "scope": "analytics:read",
        "client_id": "mallory",
        "company": company,
    });
    let part = |v: &serde_json::Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.{}",
        part(&header),
        part(&claims),
        URL_SAFE_NO_PAD.encode([7u8; 64])
    )
}

fn unique_jti() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("forged-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Creates `company` with a confidential client and returns a client-credentials access token.
async fn company_token(auth: &TestAuth, company: &str) -> String {
    auth.add_company(company).await;
    let (client, secret) = auth.add_client(company, full_client_spec()).await;
    let (status, body, _) = token_basic(
        auth,
        company,
        &client.client_id,
        &secret.unwrap(),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

/// Verifies every token on `lanes` concurrent tasks; returns the results in the order of `tokens`.
async fn verify_all(
    verifier: &JwtVerifier,
    tokens: Vec<String>,
    lanes: usize,
) -> Vec<Result<(), VerifyError>> {
    let mut tasks = JoinSet::new();
    let chunk = tokens.len().div_ceil(lanes).max(1);
    for (lane, part) in tokens.chunks(chunk).enumerate() {
        let (verifier, part) = (verifier.clone(), part.to_vec());
        tasks.spawn(async move {
            let mut results = Vec::new();
            for token in part {
                results.push(verifier.verify(&token).await.map(|_| ()));
            }
            (lane, results)
        });
    }
    let mut by_lane = tasks.join_all().await;
    by_lane.sort_by_key(|(lane, _)| *lane);
    by_lane.into_iter().flat_map(|(_, r)| r).collect()
}

async fn forged_tokens_of_unknown_companies_are_fetched_once_then_refused(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let verifier = auth.verifier();
    let companies: Vec<String> = (0..1500).map(|i| format!("ghost-{i}")).collect();
    let tokens = || companies.iter().map(|c| forged(&auth.url, c)).collect();

    let first = verify_all(&verifier, tokens(), 8).await;
    assert!(first.iter().all(|r| *r == Err(VerifyError::UnknownIssuer)));
    let fetched = verifier.jwks_fetches();
    assert_eq!(
        fetched,
        companies.len() as u64,
        "one JWKS fetch per unknown company"
    );

    let second = verify_all(&verifier, tokens(), 8).await;
    assert!(second.iter().all(|r| *r == Err(VerifyError::UnknownIssuer)));
    assert_eq!(
        verifier.jwks_fetches(),
        fetched,
        "unknown companies are remembered: a second round fetches nothing"
    );
}

async fn company_names_outside_the_rule_cause_no_fetch(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let verifier = auth.verifier();
    let long = "a".repeat(200);
    for company in [
        "../x",
        "a b",
        long.as_str(),
        "ACME",
        "",
        "acme/../acme",
        "acme?x=1",
    ] {
        assert_eq!(
            verifier
                .verify(&forged(&auth.url, company))
                .await
                .unwrap_err(),
            VerifyError::UnknownIssuer,
            "company {company:?}"
        );
    }
    // A well-formed company under a foreign issuer is refused before any fetch too.
    assert_eq!(
        verifier
            .verify(&forged("https://auth.evil.example", "acme"))
            .await
            .unwrap_err(),
        VerifyError::UnknownIssuer
    );
    assert_eq!(verifier.jwks_fetches(), 0);
    assert_eq!(verifier.cached_companies(), 0);
}

async fn the_key_cache_holds_at_most_its_capacity(backend: Backend) {
    const CAPACITY: usize = 16;
    let auth = TestAuth::start(backend).await;
    let first_token = company_token(&auth, "acme").await;
    let second_token = company_token(&auth, "acme").await;
    let mut config = VerifierConfig::new(&auth.url, &auth.url);
    config.max_companies = CAPACITY;
    let verifier = JwtVerifier::new(config);
    verifier.verify(&first_token).await.expect("acme verifies");

    let ghosts: Vec<String> = (0..100).map(|i| format!("ghost-{i}")).collect();
    for ghost in &ghosts {
        let refused = verifier.verify(&forged(&auth.url, ghost)).await;
        assert_eq!(refused.unwrap_err(), VerifyError::UnknownIssuer);
        assert!(
            verifier.cached_companies() <= CAPACITY,
            "{} companies cached, capacity {CAPACITY}",
            verifier.cached_companies()
        );
    }
    let fetched = verifier.jwks_fetches();
    assert_eq!(fetched, 1 + ghosts.len() as u64);

    // Refusals are forgotten before keys: acme's keys survived the flood.
    verifier.verify(&second_token).await.expect("acme verifies");
    // The newest refusals are still remembered...
    for ghost in &ghosts[ghosts.len() - (CAPACITY - 1)..] {
        let _ = verifier.verify(&forged(&auth.url, ghost)).await;
    }
    assert_eq!(
        verifier.jwks_fetches(),
        fetched,
        "no fetch for acme or recent ghosts"
    );
    // ...and the oldest are not: the bound is real.
    let _ = verifier.verify(&forged(&auth.url, &ghosts[0])).await;
    assert_eq!(verifier.jwks_fetches(), fetched + 1);
    assert!(verifier.cached_companies() <= CAPACITY);
}

async fn a_stalled_jwks_fetch_does_not_delay_other_companies(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let token = company_token(&auth, "acme").await;
    let proxy = StallingProxy::start(&auth.url, "/oauth/slow/jwks").await;
    let verifier = JwtVerifier::new(VerifierConfig::new(&proxy.url, &auth.url));

    let mut stalled = JoinSet::new();
    for _ in 0..3 {
        let (verifier, token) = (verifier.clone(), forged(&auth.url, "slow"));
        stalled.spawn(async move { verifier.verify(&token).await });
    }
    tokio::time::timeout(Duration::from_secs(5), proxy.wait_for_stall())
        .await
        .expect("the slow company's JWKS is requested");

    let started = Instant::now();
    let claims = tokio::time::timeout(Duration::from_secs(2), verifier.verify(&token))
        .await
        .expect("another company verifies while the slow fetch stalls")
        .expect("a valid token");
    assert_eq!(claims.company, "acme");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        proxy.stalled_requests(),
        1,
        "the slow company's verifications share one fetch"
    );
    stalled.abort_all();
}

async fn concurrent_verifications_of_one_company_share_one_fetch(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let token = company_token(&auth, "acme").await;
    let verifier = auth.verifier();
    let results = verify_all(&verifier, vec![token; 20], 20).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(verifier.jwks_fetches(), 1);

    let ghost = forged(&auth.url, "ghost");
    let results = verify_all(&verifier, vec![ghost; 20], 20).await;
    assert!(results
        .iter()
        .all(|r| *r == Err(VerifyError::UnknownIssuer)));
    assert_eq!(verifier.jwks_fetches(), 2);
}

async fn an_unknown_company_is_remembered_for_its_ttl_only(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    let mut config = VerifierConfig::new(&auth.url, &auth.url);
    config.unknown_company_ttl = Duration::from_secs(3);
    let verifier = JwtVerifier::new(config);
    assert_eq!(
        verifier
            .verify(&forged(&auth.url, "late"))
            .await
            .unwrap_err(),
        VerifyError::UnknownIssuer
    );
    let token = company_token(&auth, "late").await;
    assert_eq!(
        verifier.verify(&token).await.unwrap_err(),
        VerifyError::UnknownIssuer,
        "still remembered as unknown"
    );
    assert_eq!(verifier.jwks_fetches(), 1);
    tokio::time::sleep(Duration::from_millis(3100)).await;
    assert_eq!(verifier.verify(&token).await.unwrap().company, "late");
    assert_eq!(verifier.jwks_fetches(), 2);
}

/// A token service that cannot be reached is asked again only after the refetch interval.
#[tokio::test]
async fn an_unreachable_token_service_is_asked_once_per_refetch_interval() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let mut config = VerifierConfig::new(&closed, "https://auth.example");
    config.refetch_interval = Duration::from_millis(500);
    let verifier = JwtVerifier::new(config);
    for _ in 0..5 {
        assert_eq!(
            verifier
                .verify(&forged("https://auth.example", "acme"))
                .await
                .unwrap_err(),
            VerifyError::KeysUnavailable
        );
    }
    assert_eq!(verifier.jwks_fetches(), 1);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let _ = verifier
        .verify(&forged("https://auth.example", "acme"))
        .await;
    assert_eq!(verifier.jwks_fetches(), 2);
}

common::backend_tests!(
    forged_tokens_of_unknown_companies_are_fetched_once_then_refused,
    company_names_outside_the_rule_cause_no_fetch,
    the_key_cache_holds_at_most_its_capacity,
    a_stalled_jwks_fetch_does_not_delay_other_companies,
    concurrent_verifications_of_one_company_share_one_fetch,
    an_unknown_company_is_remembered_for_its_ttl_only,
);
