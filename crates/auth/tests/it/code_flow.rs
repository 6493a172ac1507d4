//! The authorization-code grant: login page, redirect, code exchange, scopes, refresh-token issuance,
//! untrusted requests, single use, expiry, binding to redirect URI and client, single sign-on, ID token.

use crate::support::*;

const DEFAULT_SCOPE: &str = "refreshToken openid email profile phone address";
const OTHER_REDIRECT_URI: &str = "http://127.0.0.1:9/other-callback";

/// The `action` of the page's form, unescaped.
fn form_action(html: &str) -> String {
    let start = html.find("action=\"").expect("a form action") + "action=\"".len();
    let end = start + html[start..].find('"').expect("closing quote");
    html[start..end]
        .replace("&amp;", "&")
        .replace("&quot;", "\"")
}

async fn the_login_page_is_a_form_that_posts_back_the_original_query(backend: Backend) {
    let s = setup(backend).await;
    let http = browser();
    let url = authorize_url(&s.auth, &s.client_id, &[("nonce", "n 1&2")]);
    let response = http.get(url.clone()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(location(response.headers()).is_none());
    let html = response.text().await.unwrap();
    assert!(html.contains("method=\"post\""), "{html}");
    assert!(html.contains("name=\"username\""), "{html}");
    assert!(
        html.contains("name=\"password\" type=\"password\""),
        "{html}"
    );

    let action = form_action(&html);
    let (path, query) = action.split_once('?').expect("the action keeps the query");
    assert_eq!(path, "/oauth/acme/authorize");
    assert!(query.contains("client_id="), "{query}");
    let kept = query_of(&format!("{}{action}", s.auth.url));
    assert_eq!(kept, query_of(url.as_str()), "the original query is kept");
    assert_eq!(kept["nonce"], "n 1&2");

    let csrf = auth::testing::csrf_of(&html);
    let response = http
        .post(format!("{}{action}", s.auth.url))
        .form(&[
            ("username", USERNAME),
            ("password", PASSWORD),
            ("csrf", csrf.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    let to = location(response.headers()).expect("a redirect");
    assert!(to.starts_with(&format!("{REDIRECT_URI}?")), "{to}");
    let query = query_of(&to);
    assert_eq!(query["state"], "st-123");
    assert!(query["code"].len() >= 32);
    assert!(!query["session_state"].is_empty());
    assert_eq!(query["iss"], s.auth.issuer("acme"), "RFC 9207");
    assert_eq!(query.len(), 4, "{to}");
}

async fn the_code_exchange_answers_the_spec_fields_with_the_default_scope(backend: Backend) {
    let s = setup(backend).await;
    let redirected = authorize(&s.auth, &s.client_id, &[]).await;
    assert_eq!(redirected.state.as_deref(), Some("st-123"));
    assert!(redirected.session_state.is_some());
    let (status, body, headers) = exchange_code(&s, &redirected.code).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        keys(&body),
        [
            "access_token",
            "expires_in",
            "id_token",
            "scope",
            "token_type"
        ],
        "no refresh_token without scope=refreshToken"
    );
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    assert_eq!(body["scope"], DEFAULT_SCOPE);
    assert_eq!(headers["cache-control"], "no-store");

    let claims = s
        .auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .expect("the access token verifies");
    assert_eq!(claims.sub, s.user.id);
    assert_eq!(claims.username.as_deref(), Some(USERNAME));
    assert_eq!(claims.client_id, s.client_id);
    assert_eq!(claims.company, "acme");
    assert_eq!(
        claims.scope,
        format!("{DEFAULT_SCOPE} admin"),
        "the test client has administration access"
    );
    assert!(claims.is_user_token());

    // RFC 6749 spells the parameter redirect_uri; that works as well.
    let code = authorize(&s.auth, &s.client_id, &[]).await.code;
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &code,
        &[("redirect_uri", REDIRECT_URI)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], DEFAULT_SCOPE);

    // One spelling or the other: both at once is refused, even alike, and leaves the code unused.
    let code = authorize(&s.auth, &s.client_id, &[]).await.code;
    let both = [
        ("redirect_uri", REDIRECT_URI),
        ("redirectURI", REDIRECT_URI),
    ];
    let (status, body, _) = exchange(&s.auth, &s.client_id, Some(&s.secret), &code, &both).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request")),
        "{body}"
    );
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &code,
        &[("redirect_uri", REDIRECT_URI)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

async fn scope_refresh_token_gives_a_refresh_token_only_when_the_client_issues_them(
    backend: Backend,
) {
    let s = setup(backend).await;
    let body = tokens(&s, &[("scope", "refreshToken")]).await;
    assert_eq!(
        keys(&body),
        [
            "access_token",
            "expires_in",
            "id_token",
            "refresh_token",
            "scope",
            "token_type"
        ]
    );
    assert_eq!(body["scope"], "refreshToken");
    assert!(body["refresh_token"].as_str().unwrap().len() >= 32);
    let (status, refreshed, _) = refresh(
        &s.auth,
        &s.client_id,
        &s.secret,
        body["refresh_token"].as_str().unwrap(),
    )
    .await;
    assert_eq!(status, 200, "the refresh token works: {refreshed}");

    let spec = ClientSpec {
        issue_refresh_token: false,
        ..full_client_spec()
    };
    let (client, secret) = s.auth.add_client("acme", spec).await;
    let code = authorize(&s.auth, &client.client_id, &[("scope", "refreshToken")])
        .await
        .code;
    let (status, body, _) = exchange(
        &s.auth,
        &client.client_id,
        secret.as_deref(),
        &code,
        &[("redirectURI", REDIRECT_URI)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "refreshToken");
    assert!(
        body.get("refresh_token").is_none(),
        "the client does not issue refresh tokens: {body}"
    );
}

async fn untrusted_requests_get_an_error_page_and_are_never_redirected(backend: Backend) {
    let s = setup(backend).await;
    let http = browser();
    let cases = [
        authorize_url(
            &s.auth,
            &s.client_id,
            &[("redirect_uri", "http://evil.example/callback")],
        ),
        authorize_url(
            &s.auth,
            &s.client_id,
            &[("redirect_uri", &format!("{REDIRECT_URI}/more"))],
        ),
        authorize_url(&s.auth, "no-such-client", &[]),
        reqwest::Url::parse_with_params(
            &s.auth.authorize_url("acme"),
            &[
                ("client_id", s.client_id.as_str()),
                ("response_type", "code"),
            ],
        )
        .unwrap(),
    ];
    for url in cases {
        let response = http.get(url.clone()).send().await.unwrap();
        assert_eq!(response.status(), 400, "GET {url}");
        assert!(location(response.headers()).is_none(), "GET {url}");
        assert!(response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        let html = response.text().await.unwrap();
        assert!(!html.contains("name=\"password\""), "no login form: {html}");

        // Not even with the right password.
        let response = http
            .post(url.clone())
            .form(&[("username", USERNAME), ("password", PASSWORD)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "POST {url}");
        assert!(location(response.headers()).is_none(), "POST {url}");
    }
    assert_eq!(
        get_user(&s.auth, USERNAME).await.login_count,
        0,
        "nobody signed in"
    );
}

async fn an_unsupported_response_type_is_redirected_with_the_error_and_state(backend: Backend) {
    let s = setup(backend).await;
    let url = authorize_url(&s.auth, &s.client_id, &[("response_type", "token")]);
    let response = browser().get(url).send().await.unwrap();
    assert_eq!(response.status(), 302);
    let to = location(response.headers()).expect("redirected to the client");
    assert!(to.starts_with(&format!("{REDIRECT_URI}?")), "{to}");
    let query = query_of(&to);
    assert_eq!(query["error"], "unsupported_response_type");
    assert_eq!(query["state"], "st-123");
    assert!(!query.contains_key("code"));
}

async fn a_code_is_single_use_and_a_replay_revokes_what_it_gave(backend: Backend) {
    let s = setup(backend).await;
    let code = authorize(&s.auth, &s.client_id, &[("scope", "refreshToken openid")])
        .await
        .code;
    let (status, first, _) = exchange_code(&s, &code).await;
    assert_eq!(status, 200, "{first}");
    let access = first["access_token"].as_str().unwrap();
    let refresh_token = first["refresh_token"].as_str().unwrap();
    let (_, active) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
    assert_eq!(active["active"], true, "live before the replay");

    let (status, body, _) = exchange_code(&s, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    let (status, body, _) = refresh(&s.auth, &s.client_id, &s.secret, refresh_token).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "the refresh token of the first exchange is revoked"
    );
    let (status, body) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        serde_json::json!({"active": false}),
        "the access token of the first exchange is revoked"
    );
    let response = reqwest::Client::new()
        .get(format!("{}/userinfo", s.auth.issuer("acme")))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    // A fresh code still works.
    tokens(&s, &[]).await;
}

async fn an_expired_code_is_refused(backend: Backend) {
    let auth = TestAuth::start_with(backend, |c| c.code_ttl_secs = 1).await;
    let s = setup_with(auth, full_client_spec()).await;
    let code = authorize(&s.auth, &s.client_id, &[]).await.code;
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (status, body, _) = exchange_code(&s, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // A code used within its lifetime works with these settings.
    tokens(&s, &[]).await;
}

async fn the_redirect_uri_must_match_the_authorization_request(backend: Backend) {
    let spec = ClientSpec {
        redirect_uris: vec![REDIRECT_URI.into(), OTHER_REDIRECT_URI.into()],
        ..full_client_spec()
    };
    let s = setup_with(TestAuth::start(backend).await, spec).await;
    let mismatches: [&[(&str, &str)]; 3] = [
        &[("redirectURI", OTHER_REDIRECT_URI)],
        &[("redirect_uri", OTHER_REDIRECT_URI)],
        &[],
    ];
    for extra in mismatches {
        let code = authorize(&s.auth, &s.client_id, &[]).await.code;
        let (status, body, _) =
            exchange(&s.auth, &s.client_id, Some(&s.secret), &code, extra).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant")),
            "{extra:?}"
        );
    }

    let redirected = authorize(
        &s.auth,
        &s.client_id,
        &[("redirect_uri", OTHER_REDIRECT_URI)],
    )
    .await;
    assert!(redirected.location.starts_with(OTHER_REDIRECT_URI));
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &redirected.code,
        &[("redirectURI", OTHER_REDIRECT_URI)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

async fn a_code_cannot_be_exchanged_by_another_client(backend: Backend) {
    let s = setup(backend).await;
    let (other, other_secret) = s.auth.add_client("acme", full_client_spec()).await;
    let other_secret = other_secret.unwrap();
    let code = authorize(&s.auth, &s.client_id, &[]).await.code;

    let (status, body, _) = exchange(
        &s.auth,
        &other.client_id,
        Some(&s.secret),
        &code,
        &[("redirectURI", REDIRECT_URI)],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client")),
        "client B with A's secret"
    );

    let (status, body, _) = exchange(
        &s.auth,
        &other.client_id,
        Some(&other_secret),
        &code,
        &[("redirectURI", REDIRECT_URI)],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "client B with its own credentials"
    );
    assert!(body.get("access_token").is_none());

    // Presenting it spent nothing and revoked nothing: the rightful client still exchanges it, once.
    let (status, body, _) = exchange(
        &s.auth,
        &s.client_id,
        Some(&s.secret),
        &code,
        &[("redirectURI", REDIRECT_URI)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let claims = s
        .auth
        .verifier()
        .verify(body["access_token"].as_str().unwrap())
        .await
        .expect("the rightful token verifies");
    let (status, active) = introspect(
        &s.auth,
        &s.client_id,
        &s.secret,
        body["access_token"].as_str().unwrap(),
    )
    .await;
    assert_eq!(
        (status, &active["active"]),
        (200, &serde_json::json!(true)),
        "{active}"
    );
    assert_eq!(claims.client_id, s.client_id);
}

async fn a_signed_in_browser_gets_codes_without_the_form_until_prompt_login(backend: Backend) {
    let s = setup(backend).await;
    let http = browser();
    let first = s
        .auth
        .log_in(&http, "acme", &s.client_id, USERNAME, PASSWORD, &[])
        .await
        .expect("signed in");
    let (_, first_tokens, _) = exchange_code(&s, &first.code).await;

    let url = authorize_url(&s.auth, &s.client_id, &[("state", "again")]);
    let response = http.get(url).send().await.unwrap();
    assert_eq!(response.status(), 303, "no form for a signed-in browser");
    let second = parse_redirect(response).expect("a code");
    assert_ne!(second.code, first.code);
    assert_eq!(second.state.as_deref(), Some("again"));
    assert!(second.session_state.is_some());
    let (status, second_tokens, _) = exchange_code(&s, &second.code).await;
    assert_eq!(status, 200, "{second_tokens}");
    assert_eq!(
        jwt_claims(second_tokens["id_token"].as_str().unwrap())["auth_time"],
        jwt_claims(first_tokens["id_token"].as_str().unwrap())["auth_time"],
        "the same sign-in"
    );
    assert_eq!(
        get_user(&s.auth, USERNAME).await.login_count,
        1,
        "the password was checked once"
    );

    let url = authorize_url(&s.auth, &s.client_id, &[("prompt", "login")]);
    let response = http.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200, "prompt=login shows the form again");
    assert!(response.text().await.unwrap().contains("name=\"password\""));

    // Another browser has no session.
    let response = browser()
        .get(authorize_url(&s.auth, &s.client_id, &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

async fn the_id_token_carries_the_openid_claims(backend: Backend) {
    let s = setup(backend).await;
    let before = now_secs();
    let body = tokens(&s, &[("nonce", "n-0S6_WzA2Mj")]).await;
    let id_token = body["id_token"].as_str().unwrap();
    let access = body["access_token"].as_str().unwrap();
    assert_eq!(jwt_header(id_token)["alg"], "RS256");
    let claims = jwt_claims(id_token);
    assert_eq!(claims["iss"], s.auth.issuer("acme"));
    assert_eq!(claims["sub"], s.user.id);
    assert_eq!(claims["aud"], s.client_id);
    assert_eq!(claims["nonce"], "n-0S6_WzA2Mj");
    assert_eq!(claims["at_hash"], at_hash(access));
    assert_ne!(claims["at_hash"], at_hash(&format!("{access}x")));
    let auth_time = claims["auth_time"].as_i64().expect("auth_time is a number");
    let iat = claims["iat"].as_i64().unwrap();
    assert!(
        (before - 1..=iat).contains(&auth_time),
        "{auth_time} {before} {iat}"
    );
    assert_eq!(claims["exp"].as_i64().unwrap() - iat, 3600);
    assert_eq!(claims["email"], "alice@example.com");
    assert_eq!(claims["preferred_username"], USERNAME);

    let body = tokens(&s, &[]).await;
    let claims = jwt_claims(body["id_token"].as_str().unwrap());
    assert!(claims.get("nonce").is_none(), "no nonce when none was sent");
    assert_eq!(claims["sub"], s.user.id);
}

common::backend_tests!(
    the_login_page_is_a_form_that_posts_back_the_original_query,
    the_code_exchange_answers_the_spec_fields_with_the_default_scope,
    scope_refresh_token_gives_a_refresh_token_only_when_the_client_issues_them,
    untrusted_requests_get_an_error_page_and_are_never_redirected,
    an_unsupported_response_type_is_redirected_with_the_error_and_state,
    a_code_is_single_use_and_a_replay_revokes_what_it_gave,
    an_expired_code_is_refused,
    the_redirect_uri_must_match_the_authorization_request,
    a_code_cannot_be_exchanged_by_another_client,
    a_signed_in_browser_gets_codes_without_the_form_until_prompt_login,
    the_id_token_carries_the_openid_claims,
);
