//! The password login of the authorize endpoint: failures and their counting, lockout, the login facts,
//! blocked accounts, a message that reveals nothing, and the per-address attempt limit.

use crate::support::*;

/// Posts the login form with a fresh browser; returns status, body and whether it redirected.
async fn attempt(s: &Setup, username: &str, password: &str) -> (u16, String, Option<String>) {
    let response = auth::testing::post_login(
        &browser(),
        authorize_url(&s.auth, &s.client_id, &[]),
        username,
        password,
    )
    .await;
    let status = response.status().as_u16();
    let to = location(response.headers());
    (status, response.text().await.unwrap(), to)
}

async fn a_wrong_password_is_401_with_the_generic_message_and_counted(backend: Backend) {
    let s = setup(backend).await;
    let (status, html, to) = attempt(&s, USERNAME, "not the password").await;
    assert_eq!(status, 401);
    assert!(to.is_none());
    assert!(html.contains(FAILED_LOGIN), "{html}");
    assert!(
        html.contains("name=\"password\""),
        "the form is shown again"
    );
    assert!(
        !html.contains("not the password"),
        "the password is not echoed"
    );
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(user.failed_login_count, 1);
    assert_eq!(user.login_count, 0);
    assert!(user.last_login.is_none());

    attempt(&s, USERNAME, "still not it").await;
    assert_eq!(get_user(&s.auth, USERNAME).await.failed_login_count, 2);
}

async fn repeated_failures_lock_the_account(backend: Backend) {
    let s = setup(backend).await;
    for n in 1..=5 {
        let (status, _, _) = attempt(&s, USERNAME, &format!("guess {n}")).await;
        assert_eq!(status, 401);
    }
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(user.failed_login_count, 5);
    assert!(user.locked_until_ms.is_some(), "locked after 5 failures");

    let (status, html, to) = attempt(&s, USERNAME, PASSWORD).await;
    assert_eq!(
        status, 401,
        "the right password does not open a locked account"
    );
    assert!(to.is_none());
    assert!(html.contains(FAILED_LOGIN));
    assert_eq!(get_user(&s.auth, USERNAME).await.login_count, 0);
}

async fn fewer_failures_do_not_lock_and_a_success_resets_them(backend: Backend) {
    let s = setup(backend).await;
    for n in 1..=4 {
        attempt(&s, USERNAME, &format!("guess {n}")).await;
    }
    let before = now_secs();
    let (status, _, to) = attempt(&s, USERNAME, PASSWORD).await;
    assert_eq!(status, 303);
    assert!(to.unwrap().starts_with(REDIRECT_URI));
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(user.failed_login_count, 0);
    assert_eq!(user.login_count, 1);
    assert!(user.locked_until_ms.is_none());
    let last = user.last_login.expect("last_login is set");
    assert!(
        (before - 1..=now_secs()).contains(&last.timestamp()),
        "{last} {before}"
    );

    authorize(&s.auth, &s.client_id, &[]).await;
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(user.login_count, 2);
    assert!(user.last_login.unwrap() >= last);
}

async fn a_blocked_user_cannot_sign_in(backend: Backend) {
    let s = setup(backend).await;
    update_user(&s.auth, USERNAME, |u| {
        u.login_blocked = true;
        u.login_blocked_reason = Some("left the company".into());
    })
    .await;
    assert!(get_user(&s.auth, USERNAME).await.login_blocked);
    let (status, html, to) = attempt(&s, USERNAME, PASSWORD).await;
    assert_eq!(status, 401);
    assert!(to.is_none());
    assert!(html.contains(FAILED_LOGIN));
    assert!(!html.contains("left the company"));
    assert_eq!(get_user(&s.auth, USERNAME).await.login_count, 0);

    update_user(&s.auth, USERNAME, |u| u.login_blocked = false).await;
    let (status, _, _) = attempt(&s, USERNAME, PASSWORD).await;
    assert_eq!(status, 303, "unblocked, the user signs in again");
}

async fn an_unknown_username_gets_the_same_answer(backend: Backend) {
    let s = setup(backend).await;
    let (status, unknown, to) = attempt(&s, "nobody", PASSWORD).await;
    assert_eq!(status, 401);
    assert!(to.is_none());
    let (_, wrong, _) = attempt(&s, USERNAME, "wrong").await;
    assert!(unknown.contains(FAILED_LOGIN));
    // Each page carries its own fresh CSRF token; everything else is the same.
    let same = |html: &str, name: &str| {
        html.replace(name, "NAME")
            .replace(&auth::testing::csrf_of(html), "TOKEN")
    };
    assert_eq!(
        same(&unknown, "nobody"),
        same(&wrong, USERNAME),
        "the page does not tell whether the username exists"
    );
}

async fn too_many_attempts_from_one_address_are_429(backend: Backend) {
    let auth = TestAuth::start_with(backend, |c| c.login_attempts_per_minute = 3).await;
    let s = setup_with(auth, full_client_spec()).await;
    for n in 1..=3 {
        let (status, _, _) = attempt(&s, USERNAME, &format!("guess {n}")).await;
        assert_eq!(status, 401, "attempt {n}");
    }
    let response = auth::testing::post_login(
        &browser(),
        authorize_url(&s.auth, &s.client_id, &[]),
        USERNAME,
        PASSWORD,
    )
    .await;
    assert_eq!(response.status(), 429);
    assert!(location(response.headers()).is_none());
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(
        user.failed_login_count, 3,
        "the refused attempt was not tried"
    );
    assert_eq!(user.login_count, 0);

    // Showing the form is not an attempt.
    let response = browser()
        .get(authorize_url(&s.auth, &s.client_id, &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

common::backend_tests!(
    a_wrong_password_is_401_with_the_generic_message_and_counted,
    repeated_failures_lock_the_account,
    fewer_failures_do_not_lock_and_a_success_resets_them,
    a_blocked_user_cannot_sign_in,
    an_unknown_username_gets_the_same_answer,
    too_many_attempts_from_one_address_are_429,
);
