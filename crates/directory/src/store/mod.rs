//! The directory's storage: one public function per operation, running a statement of `sql.rs` on either
//! database.

mod arguments;
mod direct;
mod rows;
mod sql;

use chrono::{DateTime, Utc};
use common::db::{Handle, Probe, StoreError, Tx};
use common::dispatch;

use sql::Statements;

use crate::model::*;

pub use arguments::{LoginPolicy, RoleFilter, UserFilter};

pub async fn get_company<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
) -> Result<Option<Company>, StoreError> {
    dispatch!(h, Statements::get_company(id))
}

/// Inserts the company unless it exists; returns whether it was created.
pub async fn ensure_company<'a>(
    h: impl Into<Handle<'a>>,
    company: &Company,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::ensure_company(company))
}

pub async fn get_role<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    name: &str,
) -> Result<Option<Role>, StoreError> {
    dispatch!(h, Statements::get_role(company, name))
}

pub async fn insert_role<'a>(h: impl Into<Handle<'a>>, role: &Role) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_role(role))
}

/// Replaces the role if its stored version is `role.version - 1`; otherwise `Stale`.
pub async fn update_role<'a>(h: impl Into<Handle<'a>>, role: &Role) -> Result<(), StoreError> {
    dispatch!(h, Statements::update_role(role))
}

/// Deletes the role if its stored version is `version`; false when it is missing or changed. A role
/// some user still holds is `InUse`.
pub async fn delete_role_if_version<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    name: &str,
    version: i64,
) -> Result<bool, StoreError> {
    dispatch!(
        h,
        Statements::delete_role_if_version(company, name, version)
    )
}

/// Roles ordered by name, strictly after `after`, that pass `filter`.
pub async fn list_roles<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    filter: &RoleFilter,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<Role>, StoreError> {
    dispatch!(h, Statements::list_roles(company, filter, after, limit))
}

/// The permissions of the named roles of `company` (unknown names grant nothing).
pub async fn permissions_of_roles<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    roles: &[&str],
) -> Result<Vec<String>, StoreError> {
    dispatch!(h, Statements::permissions_of_roles(company, roles))
}

pub async fn get_user<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    username: &str,
) -> Result<Option<User>, StoreError> {
    let h: Handle<'a> = h.into();
    if let Some(found) = h.read_now(|c| direct::get_user(c, company, username)) {
        return Ok(found);
    }
    dispatch!(h, Statements::get_user(company, username))
}

pub async fn get_user_by_id<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    id: &str,
) -> Result<Option<User>, StoreError> {
    dispatch!(h, Statements::get_user_by_id(company, id))
}

/// The user and the permissions its roles grant, read together; with a `probe` of another owner's table
/// (e.g. `revocation::revoked`), its value too, in the same statement (`false` without one).
pub async fn get_user_with_permissions<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    id: &str,
    probe: Option<&Probe<'_>>,
) -> Result<Option<UserAccess>, StoreError> {
    let h: Handle<'a> = h.into();
    if let Some(found) = h.read_now(|c| direct::get_user_with_permissions(c, company, id, probe)) {
        return Ok(found);
    }
    dispatch!(h, Statements::get_user_with_permissions(company, id, probe))
}

/// Inserts the user with its roles (a role that does not exist is `NotFound`).
pub async fn insert_user(tx: &mut Tx, user: &User) -> Result<(), StoreError> {
    dispatch!(tx, Statements::insert_user(user))
}

/// Replaces the profile and roles (everything but the password and login facts) if the stored version
/// is `user.version - 1`; otherwise `Stale`.
pub async fn update_user(tx: &mut Tx, user: &User) -> Result<(), StoreError> {
    dispatch!(tx, Statements::update_user(user))
}

/// Deletes the user if its stored version is `version`; false when it is missing or changed.
pub async fn delete_user_if_version<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    username: &str,
    version: i64,
) -> Result<bool, StoreError> {
    dispatch!(
        h,
        Statements::delete_user_if_version(company, username, version)
    )
}

/// Users ordered by username, strictly after `after`.
pub async fn list_users<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    filter: &UserFilter,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<User>, StoreError> {
    dispatch!(h, Statements::list_users(company, filter, after, limit))
}

/// Sets the password hash. Sessions, codes and refresh tokens authenticated before `at` become void,
/// and the failed-login count and any lock are cleared.
pub async fn set_password<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    user_id: &str,
    hash: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::set_password(company, user_id, hash, at))
}

/// Reserves one login attempt before its password is checked: counts it as a failure at once and
/// locks the account when the count reaches the limit. `None` when the account is locked (nothing is
/// counted); otherwise the count including this attempt. Concurrent attempts each get their own count,
/// so no more than `lock_after` passwords are ever checked per lock period.
pub async fn reserve_login_attempt<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    user_id: &str,
    policy: LoginPolicy,
) -> Result<Option<i64>, StoreError> {
    dispatch!(
        h,
        Statements::reserve_login_attempt(company, user_id, policy)
    )
}

/// Records a successful login (last_login, login_count + 1). The failure count and the lock are
/// cleared only when no other attempt was reserved after this one (`reserved` is still the count):
/// a success amid a burst of failures leaves their count and lock in place.
pub async fn record_login_success<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    user_id: &str,
    at: DateTime<Utc>,
    reserved: i64,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::record_login_success(company, user_id, at, reserved)
    )
}

pub async fn get_client<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    client_id: &str,
) -> Result<Option<OAuthClient>, StoreError> {
    dispatch!(h, Statements::get_client(company, client_id))
}

pub async fn insert_client<'a>(
    h: impl Into<Handle<'a>>,
    client: &OAuthClient,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_client(client))
}

/// Replaces the client settings (not the secret) if the stored version is `client.version - 1`.
pub async fn update_client<'a>(
    h: impl Into<Handle<'a>>,
    client: &OAuthClient,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::update_client(client))
}

/// Replaces the secret hash and bumps the version whatever the stored version is (the operator's
/// bootstrap); `NotFound` when the client does not exist. A request that checked If-Match uses
/// `set_client_secret_if_version`.
pub async fn set_client_secret<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    client_id: &str,
    secret_hash: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::set_client_secret(company, client_id, secret_hash, at)
    )
}

/// Replaces the secret hash and bumps the version if the stored version is `version` (the one the caller
/// read and checked against If-Match), in one statement: of rotations racing with the same version, one
/// wins and the others get `Stale`, as does a client that is missing or changed.
pub async fn set_client_secret_if_version<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    client_id: &str,
    version: i64,
    secret_hash: &str,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::set_client_secret_if_version(company, client_id, version, secret_hash, at)
    )
}

/// Deletes the client if its stored version is `version`; false when it is missing or changed.
pub async fn delete_client_if_version<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    client_id: &str,
    version: i64,
) -> Result<bool, StoreError> {
    dispatch!(
        h,
        Statements::delete_client_if_version(company, client_id, version)
    )
}

/// Clients ordered by id, strictly after `after`.
pub async fn list_clients<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    after: Option<&str>,
    limit: i64,
) -> Result<Vec<OAuthClient>, StoreError> {
    dispatch!(h, Statements::list_clients(company, after, limit))
}
