//! Password login for the authorize endpoint: argon2id verification, failed-login counting and lockout,
//! and the login facts (last_login, login_count) the admin API reports.

use chrono::Utc;
use common::db::{now_millis, StoreError};
use common::directory::User;
use common::secrets::verify_password;

use crate::state::AuthState;

/// Why a login failed. Users are told the same thing for every reason, so the page reveals neither which
/// usernames exist nor which accounts are locked.
#[derive(Debug, PartialEq, Eq)]
pub enum LoginFailure {
    UnknownUser,
    WrongPassword,
    Locked,
    Blocked,
}

pub async fn log_in(
    state: &AuthState,
    company: &str,
    username: &str,
    password: &str,
) -> Result<Result<User, LoginFailure>, StoreError> {
    let user = state.directory.get_user(company, username).await?;
    let Some(user) = user else {
        verify_password(password, None);
        return Ok(Err(LoginFailure::UnknownUser));
    };
    // The hash is checked in every branch, so each failure takes the same time.
    let password_ok = verify_password(password, user.password_hash.as_deref());
    if user
        .locked_until_ms
        .is_some_and(|until| until > now_millis())
    {
        return Ok(Err(LoginFailure::Locked));
    }
    if !user.can_log_in() {
        return Ok(Err(LoginFailure::Blocked));
    }
    if !password_ok {
        let now = now_millis();
        let lock_until = now + state.config.lockout_secs * 1000;
        state
            .directory
            .record_login_failure(
                company,
                &user.id,
                now,
                state.config.lockout_threshold,
                lock_until,
            )
            .await?;
        return Ok(Err(LoginFailure::WrongPassword));
    }
    state
        .directory
        .record_login_success(company, &user.id, Utc::now())
        .await?;
    Ok(Ok(user))
}
