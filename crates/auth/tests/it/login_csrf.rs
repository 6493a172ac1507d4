//! Login CSRF: a login POST counts only with the form's token matching its pre-login cookie, and never
//! from another site, so a cross-site page cannot sign a victim's browser into an attacker's account.

use crate::support::*;

async fn post(
    http: &reqwest::Client,
    url: reqwest::Url,
    csrf: Option<&str>,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut form = vec![("username", USERNAME), ("password", PASSWORD)];
    if let Some(csrf) = csrf {
        form.push(("csrf", csrf));
    }
    let mut request = http.post(url).form(&form);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.unwrap()
}

async fn a_login_post_needs_the_token_of_its_own_form(backend: Backend) {
    let s = setup(backend).await;
    let url = authorize_url(&s.auth, &s.client_id, &[]);

    // No form was fetched: no cookie, no token.
    let blind = post(&browser(), url.clone(), None, &[]).await;
    assert_eq!(blind.status(), 403);
    assert!(location(blind.headers()).is_none());

    // A token from another browser's form does not match this browser's cookie.
    let attacker = browser();
    let theirs = attacker.get(url.clone()).send().await.unwrap();
    let their_token = auth::testing::csrf_of(&theirs.text().await.unwrap());
    let victim = browser();
    victim.get(url.clone()).send().await.unwrap();
    let crossed = post(&victim, url.clone(), Some(&their_token), &[]).await;
    assert_eq!(crossed.status(), 403);

    // The victim's own token, but posted from another site.
    let own = victim.get(url.clone()).send().await.unwrap();
    let token = auth::testing::csrf_of(&own.text().await.unwrap());
    for headers in [
        [("Origin", "https://attacker.example")],
        [("Sec-Fetch-Site", "cross-site")],
    ] {
        let refused = post(&victim, url.clone(), Some(&token), &headers).await;
        assert_eq!(refused.status(), 403, "{headers:?}");
        assert!(location(refused.headers()).is_none());
    }
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(user.login_count, 0, "no refused post signed anyone in");

    // The form's own token, from the service's own origin, works.
    let own = victim.get(url.clone()).send().await.unwrap();
    let token = auth::testing::csrf_of(&own.text().await.unwrap());
    let origin = s.auth.url.clone();
    let ok = post(
        &victim,
        url,
        Some(&token),
        &[
            ("Origin", origin.as_str()),
            ("Sec-Fetch-Site", "same-origin"),
        ],
    )
    .await;
    assert_eq!(ok.status(), 303);
}

/// A form that names a field twice signs no one in, and the page says why (the field's name escaped).
async fn a_form_repeating_a_field_is_refused_with_its_reason(backend: Backend) {
    let s = setup(backend).await;
    let url = authorize_url(&s.auth, &s.client_id, &[]);
    let browser = browser();
    let page = browser.get(url.clone()).send().await.unwrap();
    let csrf = auth::testing::csrf_of(&page.text().await.unwrap());
    let form = [
        ("username", USERNAME),
        ("password", "wrong password"),
        ("password", PASSWORD),
        ("csrf", csrf.as_str()),
        ("<b>x</b>", "1"),
        ("<b>x</b>", "2"),
    ];
    let refused = browser.post(url).form(&form).send().await.unwrap();
    assert_eq!(refused.status(), 400);
    assert!(location(refused.headers()).is_none(), "no one is signed in");
    let html = refused.text().await.unwrap();
    assert!(html.contains("parameter password is repeated"), "{html}");
    assert!(
        !html.contains("<b>x</b>"),
        "nothing of the form is echoed unescaped"
    );
}

common::backend_tests!(
    a_form_repeating_a_field_is_refused_with_its_reason,
    a_login_post_needs_the_token_of_its_own_form
);
