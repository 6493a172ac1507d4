//! Why a user's tokens are no longer honoured, said so that the client knows what happened: a deleted,
//! blocked or inactive account, or a sign-in that a later password change (or block, deactivation or
//! re-activation) ended. The checks are the directory's (`User::can_log_in`, `User::session_valid`);
//! this file only words their refusals.

use directory::User;

/// Why the account cannot be used at all, or `None` when it can.
pub fn account_refusal(user: Option<&User>) -> Option<&'static str> {
    match user {
        None => Some("the user no longer exists"),
        Some(u) if u.login_blocked => Some("the user is blocked"),
        Some(u) if !u.can_log_in() => Some("the user is inactive"),
        Some(_) => None,
    }
}

/// Why something the user authenticated at `auth_time_ms` (a code, a refresh token family) no longer
/// counts, or `None` when it still does.
pub fn session_refusal(user: Option<&User>, auth_time_ms: i64) -> Option<&'static str> {
    if let Some(refusal) = account_refusal(user) {
        return Some(refusal);
    }
    let user = user?;
    if user.session_valid(auth_time_ms) {
        return None;
    }
    // A password change sets the end of sessions to the instant the password was set; a block, a
    // deactivation or a re-activation after it sets a later one.
    let ended_ms = user.sessions_valid_after_ms.unwrap_or(i64::MAX);
    let password_changed = user
        .password_last_set
        .is_some_and(|at| at.timestamp_millis() >= ended_ms);
    Some(if password_changed {
        "the user's password was changed after this sign-in: the user must sign in again"
    } else {
        "the user's sessions were ended after this sign-in (the account was blocked, deactivated or \
         re-activated): the user must sign in again"
    })
}
