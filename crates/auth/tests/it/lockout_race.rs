//! Lockout under a parallel burst: every attempt is reserved (counted and checked) before its password is
//! verified, so a burst gets no more password checks than the limit allows and leaves the count exact.

use auth::login::{log_in, LoginFailure};

use crate::support::*;

/// Runs the attempts at once through the login function the form uses; returns their outcomes.
async fn burst(s: &Setup, passwords: Vec<String>) -> Vec<Result<(), LoginFailure>> {
    let state = s.auth.service.state.clone();
    let tasks: Vec<_> = passwords
        .into_iter()
        .map(|password| {
            let state = state.clone();
            tokio::spawn(async move {
                log_in(&state, "acme", USERNAME, &password)
                    .await
                    .expect("the store answers")
                    .map(|_| ())
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    outcomes
}

async fn a_burst_of_wrong_passwords_checks_no_more_than_the_limit(backend: Backend) {
    let s = setup(backend).await;
    let outcomes = burst(&s, (0..20).map(|i| format!("guess {i}")).collect()).await;
    let checked = outcomes
        .iter()
        .filter(|o| **o == Err(LoginFailure::WrongPassword))
        .count();
    let locked = outcomes
        .iter()
        .filter(|o| **o == Err(LoginFailure::Locked))
        .count();
    assert_eq!(checked, 5, "{outcomes:?}");
    assert_eq!(locked, 15, "{outcomes:?}");
    let user = get_user(&s.auth, USERNAME).await;
    assert_eq!(user.failed_login_count, 5);
    assert!(user.locked_until_ms.is_some());
}

async fn the_right_password_amid_a_burst_does_not_reopen_the_account(backend: Backend) {
    let s = setup(backend).await;
    let mut passwords: Vec<String> = (0..20).map(|i| format!("guess {i}")).collect();
    passwords.insert(10, PASSWORD.to_string());
    let outcomes = burst(&s, passwords).await;
    let checked = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(()) | Err(LoginFailure::WrongPassword)))
        .count();
    assert!(
        checked <= 5,
        "{checked} passwords were checked: {outcomes:?}"
    );
    let user = get_user(&s.auth, USERNAME).await;
    let succeeded = outcomes.iter().any(|o| o.is_ok());
    assert_eq!(user.login_count, i64::from(succeeded));
    if user.failed_login_count == 0 {
        // Only when the success held the last reservation of the burst: nothing was pending after it.
        assert!(succeeded && checked == 5, "{outcomes:?}");
        assert!(user.locked_until_ms.is_none());
    } else {
        assert_eq!(user.failed_login_count, 5, "{outcomes:?}");
        assert!(user.locked_until_ms.is_some());
    }
    // Either way, a further guess now is refused unchecked or counted from the exact figure.
    let after = burst(&s, vec!["one more".into()]).await;
    let user = get_user(&s.auth, USERNAME).await;
    assert!(user.failed_login_count <= 5, "{after:?}");
}

common::backend_tests!(
    a_burst_of_wrong_passwords_checks_no_more_than_the_limit,
    the_right_password_amid_a_burst_does_not_reopen_the_account,
);
