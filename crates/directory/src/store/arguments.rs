//! What the store's functions take beside the directory's records: the filters of listings and the
//! accounting of a login attempt.

/// Filters of a user listing.
#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    pub status: Option<String>,
    /// Matches the primary role or any extra role.
    pub role: Option<String>,
}

/// Filters of a role listing.
#[derive(Debug, Clone, Default)]
pub struct RoleFilter {
    /// Only the role with this name.
    pub name: Option<String>,
    /// Only roles held (as primary or extra role) by at least one user with this status.
    pub held_by_status: Option<String>,
}

/// Failed-login accounting: the reservation of one attempt before its password is checked.
#[derive(Debug, Clone, Copy)]
pub struct LoginPolicy {
    pub now_ms: i64,
    /// Failures that lock the account.
    pub lock_after: i64,
    /// Until when a lock holds, when this attempt sets it.
    pub lock_until_ms: i64,
}
