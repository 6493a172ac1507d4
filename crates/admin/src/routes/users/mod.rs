//! `/admin/v1/users`: the user records of docs/admin-api.md (permission Manage Users). A caller may assign
//! only roles whose permissions it holds, may not change or delete a user holding a permission it lacks,
//! and sets another user's password, a new user's included, only with Set Passwords. A change and its
//! audit entry are one transaction. The body and its checks are in `body`, the record in `record`.

mod body;
mod record;

use std::sync::Arc;

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use chrono::Utc;
use common::http::StrictJson;
use common::{ApiError, ErrorCode};
use directory::{permissions, User, UserFilter};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use utoipa::IntoParams;

use super::answer::{created, ok_with_etag};
use super::stored::{self, stored, Stored};
use crate::api::{hash_password, page};
use crate::audit;
use crate::caller::{Caller, ManageUsers};
use crate::precondition::IfMatch;
use crate::query::{encode_cursor, KeyCursor, Limit, NameFilter, Query, StatusFilter};
use crate::revoke;
use crate::state::AdminState;

pub use body::{valid_username, UserBody, UserCreate, UserInput};
pub use record::{user_view, UserPage, UserRecord};

/// Why a user has no password when the administrator created it without one.
pub const PASSWORD_NOT_SET: &str = "no password was set when the account was created";

/// What the caller may do with the record: everything, except deleting their own account.
fn allowed<P>(caller: &Caller<P>, u: &User) -> &'static [&'static str] {
    if caller.user().id == u.id {
        &["GET", "PUT"]
    } else {
        &["GET", "PUT", "DELETE"]
    }
}

/// The fields an audit entry compares.
fn audit_view(u: &User) -> Map<String, Value> {
    let v = json!({
        "username": u.username,
        "first_name": u.first_name,
        "last_name": u.last_name,
        "salutation": u.salutation,
        "email": u.email,
        "phone": u.phone,
        "automatic_update": u.automatic_update,
        "excluded_from_user_activity": u.excluded_from_user_activity,
        "company_account_id": u.company_account_id,
        "login_blocked": u.login_blocked,
        "login_blocked_reason": u.login_blocked_reason,
        "status": u.status,
        "api_access": u.api_access,
        "primary_role": u.primary_role,
        "extra_roles": u.extra_roles,
        "data-access": u.data_access,
    });
    match v {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

stored!(User {
    kind: audit::USER,
    key: username,
    audit: audit_view,
    find: directory::get_user,
    insert: directory::insert_user,
    update: directory::update_user,
    delete: directory::delete_user_if_version,
});

/// Every role the input names must exist in the company, and the caller must hold every permission they
/// grant.
async fn check_roles<P>(
    state: &AdminState,
    caller: &Caller<P>,
    input: &UserInput,
) -> Result<(), ApiError> {
    let named = std::iter::once(("roles.primary_role.role".to_string(), &input.primary_role))
        .chain(
            input
                .extra_roles
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("roles.extra_roles[{i}]"), r)),
        );
    for (field, role) in named {
        if directory::get_role(&state.db, &caller.company, role)
            .await?
            .is_none()
        {
            let mut error =
                ApiError::not_found(format!("role {role} does not exist in this company"));
            error.field = Some(field);
            return Err(error);
        }
    }
    let roles: Vec<&str> = std::iter::once(input.primary_role.as_str())
        .chain(input.extra_roles.iter().map(String::as_str))
        .collect();
    let granted = directory::permissions_of_roles(&state.db, &caller.company, &roles).await?;
    caller.require_all(&granted, "a role you assign")
}

/// The caller may change or delete `user` only when it holds every permission `user` holds.
async fn check_target<P>(
    state: &AdminState,
    caller: &Caller<P>,
    user: &User,
) -> Result<(), ApiError> {
    let roles: Vec<&str> = user.roles().collect();
    let held = directory::permissions_of_roles(&state.db, &caller.company, &roles).await?;
    caller.require_all(&held, &format!("user {}", user.username))
}

fn apply(user: &mut User, input: UserInput) {
    user.first_name = input.first_name;
    user.last_name = input.last_name;
    user.salutation = input.salutation;
    user.email = input.email;
    user.phone = input.phone;
    user.automatic_update = input.automatic_update;
    user.excluded_from_user_activity = input.excluded_from_user_activity;
    user.company_account_id = input.company_account_id;
    user.login_blocked = input.login_blocked;
    user.login_blocked_reason = input.login_blocked_reason;
    user.status = input.status;
    user.primary_role = input.primary_role;
    user.extra_roles = input.extra_roles;
    user.data_access = input.data_access;
    if let Some(api_access) = input.api_access {
        user.api_access = api_access;
    }
}

/// The query of the user listing.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserListQuery {
    #[param(inline)]
    limit: Option<Limit>,
    #[param(inline)]
    cursor: Option<KeyCursor>,
    /// Only users with this status (any case).
    #[param(inline)]
    status: Option<StatusFilter>,
    /// Only users holding this role (primary or extra).
    #[param(inline)]
    role: Option<NameFilter>,
}

/// List users
///
/// Keyset pages ordered by username. Requires the Manage Users permission.
#[utoipa::path(get, operation_id = "listUsers", path = "/admin/v1/users", tag = "users",
    params(UserListQuery),
    responses((status = 200, description = "A page of user records", body = UserPage)))]
pub async fn list(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    query: Query<UserListQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.read()?;
    let limit = Limit::of(q.limit);
    let after = KeyCursor::after(q.cursor);
    let filter = UserFilter {
        status: q.status.map(|s| s.0),
        role: q.role.map(|r| r.0),
    };
    let mut rows = directory::list_users(
        &state.db,
        &caller.company,
        &filter,
        after.as_deref(),
        limit + 1,
    )
    .await?;
    Ok(HttpResponse::Ok().json(page(
        &mut rows,
        limit,
        |u| encode_cursor(&u.username),
        |u| user_view(u, allowed(&caller, u)),
    )))
}

/// Read a user
///
/// Requires the Manage Users permission.
#[utoipa::path(get, operation_id = "getUser", path = "/admin/v1/users/{username}", tag = "users",
    params(("username" = String, Path, description = "The user's username")),
    responses(
        (status = 200, description = "The user record", body = UserRecord,
            headers(("ETag" = String, description = "W/\"<version>\"; send it back in If-Match"))),
        (status = 404, description = "No such user in the caller's company", body = common::error::ErrorBody)))]
pub async fn get(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    username: Path<String>,
) -> Result<HttpResponse, ApiError> {
    // The caller's own record is the one the guard read for this request (or took from the same
    // short-lived cache), so reading it again would be a second round trip for the same row.
    if username.as_str() == caller.username() {
        let user = caller.user();
        return Ok(HttpResponse::Ok()
            .insert_header(("ETag", crate::precondition::etag(user.version)))
            .json(UserRecord::of(user, allowed(&caller, user))));
    }
    // Reads go through the replica's short-lived cache; writes below always read the stored record.
    let key = (caller.company.clone(), username.into_inner());
    let user = match state.users.get(&key) {
        Some(user) => user,
        None => {
            let user = Arc::new(stored::load::<User>(&state, &caller.company, &key.1).await?);
            state.users.insert(key, user.clone());
            user
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header(("ETag", crate::precondition::etag(user.version)))
        .json(UserRecord::of(&user, allowed(&caller, &user))))
}

/// Refuses (403) a caller setting the password of a user other than itself without Set Passwords.
fn require_set_passwords(caller: &Caller<ManageUsers>) -> Result<(), ApiError> {
    if caller.has(permissions::SET_PASSWORDS) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::Forbidden,
        format!(
            "setting the password of another user needs the {} permission",
            permissions::SET_PASSWORDS
        ),
    ))
}

/// Create a user
///
/// With a password the user can log in at /oauth/<company>/authorize at once. Requires the Manage Users
/// permission, every permission of the roles assigned, and Set Passwords to give it a password.
#[utoipa::path(post, operation_id = "createUser", path = "/admin/v1/users", tag = "users",
    request_body = UserCreate,
    responses(
        (status = 201, description = "The new user record", body = UserRecord,
            headers(("ETag" = String, description = "W/\"<version>\""), ("Location" = String, description = "The record's path"))),
        (status = 404, description = "A role named does not exist in the caller's company (`field` names \
            it)", body = common::error::ErrorBody),
        (status = 409, description = "A user with this username exists", body = common::error::ErrorBody)))]
pub async fn create(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    body: StrictJson<UserBody>,
) -> Result<HttpResponse, ApiError> {
    let input = body.0.validate()?;
    let username = input
        .username
        .clone()
        .ok_or_else(|| ApiError::field("username", "username is required"))?;
    check_roles(&state, &caller, &input).await?;
    // A user deleted and made again with a password of the caller's choosing would be a password reset
    // by another name.
    if input.password.is_some() {
        require_set_passwords(&caller)?;
    }
    let mut user = User::new(
        &caller.company,
        &username,
        &input.primary_role,
        caller.username(),
    );
    let password = input.password.clone();
    apply(&mut user, input);
    let mut audit_fields = user.audit_view();
    match password {
        Some(p) => {
            user.password_hash = Some(hash_password(p).await?);
            user.password_last_set = Some(Utc::now());
            audit_fields.insert("password".into(), audit::CHANGED.into());
        }
        None => user.password_not_set_reason = Some(PASSWORD_NOT_SET.into()),
    }
    let tx = state.db.begin().await?;
    stored::create(&state, tx, &caller, &user, &audit_fields).await?;
    Ok(created(
        &format!("/admin/v1/users/{}", user.username),
        user.version,
        user_view(&user, allowed(&caller, &user)),
    ))
}

/// Replace a user
///
/// Writable fields left out take their defaults, except `password` and `api_access`, which stay. Setting
/// another user's password needs Set Passwords besides Manage Users.
#[utoipa::path(put, operation_id = "replaceUser", path = "/admin/v1/users/{username}", tag = "users",
    params(("username" = String, Path, description = "The user's username"), IfMatch),
    request_body = UserBody,
    responses(
        (status = 200, description = "The changed user record", body = UserRecord,
            headers(("ETag" = String, description = "The new version, W/\"<version>\""))),
        (status = 404, description = "No such user in the caller's company, or a role named does not \
            exist there (`field` names it)", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn replace(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    username: Path<String>,
    if_match: IfMatch,
    body: StrictJson<UserBody>,
) -> Result<HttpResponse, ApiError> {
    let current = stored::load::<User>(&state, &caller.company, &username).await?;
    let input = body.0.validate()?;
    // As for clients: the body first, then the precondition (RFC 9110, section 13.2.1).
    if_match.require(User::KIND, current.version)?;
    if input
        .username
        .as_deref()
        .is_some_and(|u| u != current.username)
    {
        return Err(ApiError::field(
            "username",
            "username cannot be changed (it must match the path or be left out)",
        ));
    }
    check_target(&state, &caller, &current).await?;
    check_roles(&state, &caller, &input).await?;
    let is_self = current.id == caller.user().id;
    if input.password.is_some() && !is_self {
        require_set_passwords(&caller)?;
    }
    let password = input.password.clone();
    let mut user = current.clone();
    apply(&mut user, input);
    let now = Utc::now();
    user.stamp(caller.username(), now);
    // Blocking, deactivating or re-activating ends every session, code and refresh token of the user.
    if current.can_log_in() != user.can_log_in() {
        user.sessions_valid_after_ms = Some(now.timestamp_millis());
    }
    let mut after = user.audit_view();
    let password_hash = match password {
        Some(p) => {
            after.insert("password".into(), audit::CHANGED.into());
            Some(hash_password(p).await?)
        }
        None => None,
    };
    if password_hash.is_some() {
        user.password_last_set = Some(now);
        user.password_not_set_reason = None;
        user.failed_login_count = 0;
        user.locked_until_ms = None;
        user.sessions_valid_after_ms = Some(now.timestamp_millis());
    }
    let mut tx = state.db.begin().await?;
    // Blocking or deactivating also ends the access tokens the user holds, in every service.
    if current.can_log_in() && !user.can_log_in() {
        let ended_ms = user
            .sessions_valid_after_ms
            .unwrap_or_else(|| now.timestamp_millis());
        revoke::user_shut_out(&mut tx, &caller.company, &user.id, ended_ms).await?;
    }
    // The profile's update leaves the password alone: it is written here, its login facts with it.
    if let Some(hash) = &password_hash {
        directory::set_password(&mut tx, &caller.company, &user.id, hash, now).await?;
    }
    stored::replace(&state, tx, &caller, &current, &user, &after).await?;
    Ok(ok_with_etag(
        user.version,
        user_view(&user, allowed(&caller, &user)),
    ))
}

/// Delete a user
///
/// Not the caller's own account. Requires the Manage Users permission and every permission the user holds.
#[utoipa::path(delete, operation_id = "deleteUser", path = "/admin/v1/users/{username}", tag = "users",
    params(("username" = String, Path, description = "The user's username"), IfMatch),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such user in the caller's company", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn delete(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    username: Path<String>,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let current = stored::load::<User>(&state, &caller.company, &username).await?;
    if current.id == caller.user().id {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "you cannot delete your own account",
        ));
    }
    if_match.require(User::KIND, current.version)?;
    check_target(&state, &caller, &current).await?;
    let mut tx = state.db.begin().await?;
    let now_ms = Utc::now().timestamp_millis();
    revoke::user_deleted(&mut tx, &caller.company, &current.id, now_ms).await?;
    stored::delete(&state, tx, &caller, &current).await?;
    Ok(HttpResponse::NoContent().finish())
}
