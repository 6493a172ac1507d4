//! Refusals that must stay refusals under hostile input: introspection reveals nothing about blocked
//! users' tokens or other clients' refresh tokens, a CR/LF in the company segment cannot break a header,
//! and an oversized body is an OAuth JSON error.

use serde_json::json;

use crate::support::*;

async fn introspection_says_inactive_for_blocked_users_and_foreign_refresh_tokens(
    backend: Backend,
) {
    let s = setup(backend).await;
    let body = tokens(&s, &[("scope", "refreshToken")]).await;
    let access = body["access_token"].as_str().unwrap().to_string();
    let refresh = body["refresh_token"].as_str().unwrap().to_string();
    let (other, other_secret) = s.auth.add_client("acme", full_client_spec()).await;
    let other_secret = other_secret.unwrap();

    let (_, own) = introspect(&s.auth, &s.client_id, &s.secret, &refresh).await;
    assert_eq!(own["active"], true, "{own}");
    let (_, foreign) = introspect(&s.auth, &other.client_id, &other_secret, &refresh).await;
    assert_eq!(
        foreign,
        json!({"active": false}),
        "another client learns nothing"
    );

    // A resource server (any confidential client of the company) may check an access token…
    let (_, checked) = introspect(&s.auth, &other.client_id, &other_secret, &access).await;
    assert_eq!(checked["active"], true, "{checked}");
    // …which stops being active when its user is blocked, and when the user is deleted.
    update_user(&s.auth, USERNAME, |u| u.login_blocked = true).await;
    let (_, blocked) = introspect(&s.auth, &s.client_id, &s.secret, &access).await;
    assert_eq!(blocked, json!({"active": false}));
    update_user(&s.auth, USERNAME, |u| u.login_blocked = false).await;
    let user = get_user(&s.auth, USERNAME).await;
    assert!(directory::delete_user_if_version(
        &s.auth.service.state.db,
        "acme",
        USERNAME,
        user.version
    )
    .await
    .unwrap());
    let (_, deleted) = introspect(&s.auth, &s.client_id, &s.secret, &access).await;
    assert_eq!(deleted, json!({"active": false}));
}

async fn a_line_break_in_the_company_cannot_break_a_header(backend: Backend) {
    let s = setup(backend).await;
    let response = reqwest::Client::new()
        .post(format!("{}/oauth/ac%0D%0Ame/token", s.auth.url))
        .basic_auth(&s.client_id, Some(&s.secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Basic realm=\"oauth\""
    );
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"], "invalid_client");
}

async fn an_oversized_body_is_an_oauth_json_error(backend: Backend) {
    let s = setup(backend).await;
    let big = "x".repeat(200 * 1024);
    let response = reqwest::Client::new()
        .post(s.auth.token_url("acme"))
        .basic_auth(&s.client_id, Some(&s.secret))
        .form(&[
            ("grant_type", "client_credentials"),
            ("padding", big.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request", "{body}");
}

/// The body's media type is compared whole (before any `;`), not as a prefix: a Content-Type that merely
/// starts like the form type is refused at the token, introspection and revocation endpoints.
async fn only_the_form_media_type_itself_is_a_form(backend: Backend) {
    let auth = TestAuth::start(backend).await;
    auth.add_company("acme").await;
    let (client, secret) = auth.add_client("acme", full_client_spec()).await;
    let secret = secret.unwrap();
    let post = |path: &str, content_type: &str, body: String| {
        reqwest::Client::new()
            .post(format!("{}/{path}", auth.issuer("acme")))
            .basic_auth(&client.client_id, Some(&secret))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    for content_type in [
        "application/x-www-form-urlencodedXYZ",
        "application/x-www-form-urlencoded-json",
        "application/x-www-form-urlencoded/x; charset=utf-8",
    ] {
        for (path, body) in [
            ("token", "grant_type=client_credentials".to_string()),
            ("introspect", "token=x".to_string()),
            ("revoke", "token=x".to_string()),
        ] {
            let (status, body, _) = read(post(path, content_type, body).await.unwrap()).await;
            assert_eq!(
                (status, body["error"].as_str()),
                (400, Some("invalid_request")),
                "{path} with {content_type}: {body}"
            );
        }
    }
    for content_type in [
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=UTF-8",
        "Application/X-WWW-Form-Urlencoded;charset=utf-8",
    ] {
        let body = "grant_type=client_credentials".to_string();
        let (status, body, _) = read(post("token", content_type, body).await.unwrap()).await;
        assert_eq!(status, 200, "{content_type}: {body}");
    }
}

common::backend_tests!(
    only_the_form_media_type_itself_is_a_form,
    introspection_says_inactive_for_blocked_users_and_foreign_refresh_tokens,
    a_line_break_in_the_company_cannot_break_a_header,
    an_oversized_body_is_an_oauth_json_error,
);
