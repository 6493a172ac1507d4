//! The end-session endpoint: it ends the browser's login session, redirects only to registered
//! addresses, and is listed in discovery.

use crate::support::*;

async fn logout_ends_the_browser_session(backend: Backend) {
    let s = setup(backend).await;
    let browser = browser();
    s.auth
        .log_in(&browser, "acme", &s.client_id, USERNAME, PASSWORD, &[])
        .await
        .expect("alice signs in");
    // Signed in: the next authorization request is answered without the form.
    let again = browser
        .get(authorize_url(&s.auth, &s.client_id, &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 303);

    let out = browser
        .get(format!("{}/oauth/acme/logout", s.auth.url))
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    let cleared = out
        .headers()
        .get_all("set-cookie")
        .iter()
        .any(|c| c.to_str().unwrap().starts_with("speech_session=;"));
    assert!(cleared, "the session cookie is cleared");
    assert!(out.text().await.unwrap().contains("signed out"));

    let form = browser
        .get(authorize_url(&s.auth, &s.client_id, &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 200, "the login form is shown again");
    assert!(form.text().await.unwrap().contains("name=\"password\""));
}

async fn a_stolen_session_cookie_is_dead_after_logout(backend: Backend) {
    use reqwest::cookie::CookieStore;
    let s = setup(backend).await;
    let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_provider(jar.clone())
        .build()
        .unwrap();
    s.auth
        .log_in(&browser, "acme", &s.client_id, USERNAME, PASSWORD, &[])
        .await
        .expect("alice signs in");
    let url = reqwest::Url::parse(&format!("{}/oauth/acme/authorize", s.auth.url)).unwrap();
    let cookies = jar.cookies(&url).expect("the browser holds cookies");
    let stolen = cookies
        .to_str()
        .unwrap()
        .split("; ")
        .find(|c| c.starts_with("speech_session="))
        .expect("a session cookie")
        .to_string();
    let copy = || async {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(authorize_url(&s.auth, &s.client_id, &[]))
            .header("Cookie", stolen.as_str())
            .send()
            .await
            .unwrap()
            .status()
    };
    assert_eq!(
        copy().await,
        303,
        "the copied cookie works while the session lives"
    );
    let out = browser
        .post(format!("{}/oauth/acme/logout", s.auth.url))
        .form(&[("state", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    assert_eq!(
        copy().await,
        200,
        "after logout the copy gets the login form"
    );
}

async fn logout_redirects_only_to_registered_addresses(backend: Backend) {
    let s = setup(backend).await;
    let back = browser()
        .get(format!("{}/oauth/acme/logout", s.auth.url))
        .query(&[
            ("client_id", s.client_id.as_str()),
            ("post_logout_redirect_uri", REDIRECT_URI),
            ("state", "bye"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 303);
    assert_eq!(
        location(back.headers()).unwrap(),
        format!("{REDIRECT_URI}?state=bye")
    );
    for (client_id, uri) in [
        (s.client_id.as_str(), "https://evil.example/phish"),
        ("no-such-client", REDIRECT_URI),
    ] {
        let stay = browser()
            .get(format!("{}/oauth/acme/logout", s.auth.url))
            .query(&[("client_id", client_id), ("post_logout_redirect_uri", uri)])
            .send()
            .await
            .unwrap();
        assert_eq!(stay.status(), 200, "{client_id} {uri}");
        assert!(location(stay.headers()).is_none());
    }
    let discovery: serde_json::Value = reqwest::get(format!(
        "{}/oauth/acme/.well-known/openid-configuration",
        s.auth.url
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        discovery["end_session_endpoint"],
        format!("{}/oauth/acme/logout", s.auth.url)
    );
}

common::backend_tests!(
    logout_ends_the_browser_session,
    a_stolen_session_cookie_is_dead_after_logout,
    logout_redirects_only_to_registered_addresses,
);
