//! Rules of the authorization endpoint: `iss` on every redirect (RFC 9207), `prompt=none` and `max_age`
//! (OpenID Connect Core 3.1.2.1), a policy that lets the browser follow the redirect to the relying
//! party, and forwarded addresses taken from the trusted end.

use std::time::Duration;

use crate::support::*;

fn query_of(location: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(location)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

async fn every_redirect_names_the_issuer(backend: Backend) {
    let s = setup(backend).await;
    let issuer = s.auth.issuer("acme");
    let ok = authorize(&s.auth, &s.client_id, &[]).await;
    assert_eq!(param(&query_of(&ok.location), "iss"), Some(issuer.as_str()));
    let refused = browser()
        .get(authorize_url(
            &s.auth,
            &s.client_id,
            &[("response_type", "token")],
        ))
        .send()
        .await
        .unwrap();
    let pairs = query_of(&location(refused.headers()).unwrap());
    assert_eq!(param(&pairs, "error"), Some("unsupported_response_type"));
    assert_eq!(param(&pairs, "iss"), Some(issuer.as_str()));
    let discovery: serde_json::Value =
        reqwest::get(format!("{issuer}/.well-known/openid-configuration"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert_eq!(
        discovery["authorization_response_iss_parameter_supported"],
        true
    );
}

async fn prompt_none_never_shows_the_form(backend: Backend) {
    let s = setup(backend).await;
    let http = browser();
    let answer = http
        .get(authorize_url(&s.auth, &s.client_id, &[("prompt", "none")]))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 302, "redirected, not the form");
    let pairs = query_of(&location(answer.headers()).unwrap());
    assert_eq!(param(&pairs, "error"), Some("login_required"));
    assert_eq!(param(&pairs, "state"), Some("st-123"));

    s.auth
        .log_in(&http, "acme", &s.client_id, USERNAME, PASSWORD, &[])
        .await
        .expect("signs in");
    let silent = http
        .get(authorize_url(&s.auth, &s.client_id, &[("prompt", "none")]))
        .send()
        .await
        .unwrap();
    assert_eq!(silent.status(), 303);
    assert!(param(&query_of(&location(silent.headers()).unwrap()), "code").is_some());
}

async fn max_age_asks_for_a_recent_login(backend: Backend) {
    let s = setup(backend).await;
    let http = browser();
    s.auth
        .log_in(&http, "acme", &s.client_id, USERNAME, PASSWORD, &[])
        .await
        .expect("signs in");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let recent_enough = http
        .get(authorize_url(&s.auth, &s.client_id, &[("max_age", "3600")]))
        .send()
        .await
        .unwrap();
    assert_eq!(recent_enough.status(), 303);
    let too_old = http
        .get(authorize_url(&s.auth, &s.client_id, &[("max_age", "1")]))
        .send()
        .await
        .unwrap();
    assert_eq!(too_old.status(), 200, "the form is shown");
    assert!(too_old.text().await.unwrap().contains("name=\"password\""));
    let silent = http
        .get(authorize_url(
            &s.auth,
            &s.client_id,
            &[("max_age", "1"), ("prompt", "none")],
        ))
        .send()
        .await
        .unwrap();
    let pairs = query_of(&location(silent.headers()).unwrap());
    assert_eq!(param(&pairs, "error"), Some("login_required"));
}

async fn the_login_page_lets_the_browser_follow_the_redirect(backend: Backend) {
    let s = setup(backend).await;
    let form = browser()
        .get(authorize_url(&s.auth, &s.client_id, &[]))
        .send()
        .await
        .unwrap();
    let csp = form.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let origin = reqwest::Url::parse(REDIRECT_URI)
        .unwrap()
        .origin()
        .ascii_serialization();
    assert!(
        csp.contains(&format!("form-action 'self' {origin}")),
        "form-action covers the redirect after the POST: {csp}"
    );
    assert!(csp.contains("default-src 'none'"));
}

async fn forwarded_addresses_are_taken_from_the_trusted_end(backend: Backend) {
    let auth = TestAuth::start_with(backend, |c| {
        c.trust_forwarded_for = true;
        c.trusted_proxy_hops = 1;
        c.login_attempts_per_minute = 3;
    })
    .await;
    let s = setup_with(auth, full_client_spec()).await;
    let mut statuses = Vec::new();
    for i in 0..6 {
        let http = browser();
        let url = authorize_url(&s.auth, &s.client_id, &[]);
        let form = http.get(url.clone()).send().await.unwrap();
        let csrf = auth::testing::csrf_of(&form.text().await.unwrap());
        let response = http
            .post(url)
            // A fresh left-most entry each time; the proxy appended the real address last.
            .header("X-Forwarded-For", format!("198.51.100.{i}, 203.0.113.7"))
            .form(&[
                ("username", USERNAME),
                ("password", "wrong"),
                ("csrf", csrf.as_str()),
            ])
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    assert!(
        statuses.contains(&429),
        "spoofed left-most entries do not escape the limit: {statuses:?}"
    );
}

common::backend_tests!(
    every_redirect_names_the_issuer,
    prompt_none_never_shows_the_form,
    max_age_asks_for_a_recent_login,
    the_login_page_lets_the_browser_follow_the_redirect,
    forwarded_addresses_are_taken_from_the_trusted_end,
);
