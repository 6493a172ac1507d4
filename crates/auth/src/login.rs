//! Password login for the authorize endpoint: argon2id verification, failed-login counting and lockout,
//! and the login facts (last_login, login_count) the admin API reports.
//!
//! Each attempt on an existing account is reserved (counted as a failure, and locking the account at the
//! limit) in one atomic statement before its password is checked, so a burst of parallel guesses gets no
//! more checks than the limit allows and cannot race a success that resets the count.

use chrono::Utc;
use common::db::{now_millis, StoreError};
use directory::{LoginPolicy, User};

use crate::password;
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
    let user = directory::get_user(&state.db, company, username).await?;
    let Some(user) = user else {
        // The hash is checked in every branch, so each failure takes the same time.
        password::verify(password, None).await;
        return Ok(Err(LoginFailure::UnknownUser));
    };
    let now = now_millis();
    let policy = LoginPolicy {
        now_ms: now,
        lock_after: state.config.lockout_threshold,
        lock_until_ms: now + state.config.lockout_secs * 1000,
    };
    let reserved = directory::reserve_login_attempt(&state.db, company, &user.id, policy).await?;
    let password_ok = password::verify(password, user.password_hash.as_deref()).await;
    let Some(reserved) = reserved else {
        return Ok(Err(LoginFailure::Locked));
    };
    if !user.can_log_in() {
        return Ok(Err(LoginFailure::Blocked));
    }
    if !password_ok {
        // Already counted by the reservation.
        return Ok(Err(LoginFailure::WrongPassword));
    }
    directory::record_login_success(&state.db, company, &user.id, Utc::now(), reserved).await?;
    Ok(Ok(user))
}
