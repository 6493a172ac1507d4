//! `/admin/v1/users`: the user records of docs/admin-api.md (permission Manage Users). A caller may assign
//! only roles whose permissions it holds, may not change or delete a user holding a permission it lacks,
//! and sets another user's password only with Set Passwords. A change and its audit entry are one
//! transaction.

use std::sync::Arc;

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use chrono::Utc;
use common::http::StrictJson;
use common::{ApiError, ErrorCode};
use directory::{
    permissions, DataAccess, OrganizationAccess, User, UserFilter, STATUS_ACTIVE, STATUS_INACTIVE,
};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{created, ok_with_etag};
use crate::api::{changes, hash_password, iso, page, require_if_match, text, Query};
use crate::audit::{self, Change};
use crate::caller::{Caller, ManageUsers};
use crate::state::AdminState;

/// Why a user has no password when the administrator created it without one.
pub const PASSWORD_NOT_SET: &str = "no password was set when the account was created";

/// The user record of docs/admin-api.md, field for field and in its order; nullable fields are present
/// as null. Serialized straight from the stored user, without building an intermediate JSON tree.
#[derive(Serialize)]
pub struct UserRecord<'a> {
    username: &'a str,
    first_name: &'a str,
    last_name: &'a str,
    salutation: &'a Option<String>,
    email: &'a Option<String>,
    phone: &'a Option<String>,
    automatic_update: bool,
    excluded_from_user_activity: bool,
    company_account_id: &'a Option<String>,
    login_blocked: bool,
    roles: RolesView<'a>,
    #[serde(rename = "data-access")]
    data_access: DataAccessView<'a>,
    _system_properties: SystemProperties<'a>,
    _links: &'a Option<Value>,
    _allowed: &'a [&'a str],
}

#[derive(Serialize)]
struct RoleRef<'a> {
    role: &'a str,
}

#[derive(Serialize)]
struct RolesView<'a> {
    primary_role: RoleRef<'a>,
    extra_roles: Vec<RoleRef<'a>>,
}

#[derive(Serialize)]
struct DataAccessView<'a> {
    organization: &'a [OrganizationAccess],
    segments: &'a [Value],
}

#[derive(Serialize)]
struct SystemProperties<'a> {
    status: &'a str,
    created_on: String,
    created_by: &'a Option<String>,
    modified_on: String,
    modified_by: &'a str,
    login_blocked_reason: &'a Option<String>,
    last_login: Option<String>,
    login_count: i64,
    failed_login_count: i64,
    password_last_set: Option<String>,
    password_last_emailed: Option<String>,
    password_not_set_reason: &'a Option<String>,
}

impl<'a> UserRecord<'a> {
    pub fn of(u: &'a User, allowed: &'a [&'a str]) -> UserRecord<'a> {
        UserRecord {
            username: &u.username,
            first_name: &u.first_name,
            last_name: &u.last_name,
            salutation: &u.salutation,
            email: &u.email,
            phone: &u.phone,
            automatic_update: u.automatic_update,
            excluded_from_user_activity: u.excluded_from_user_activity,
            company_account_id: &u.company_account_id,
            login_blocked: u.login_blocked,
            roles: RolesView {
                primary_role: RoleRef {
                    role: &u.primary_role,
                },
                extra_roles: u.extra_roles.iter().map(|r| RoleRef { role: r }).collect(),
            },
            data_access: DataAccessView {
                organization: &u.data_access.organization,
                segments: &u.data_access.segments,
            },
            _system_properties: SystemProperties {
                status: &u.status,
                created_on: iso(u.created_on),
                created_by: &u.created_by,
                modified_on: iso(u.modified_on),
                modified_by: &u.modified_by,
                login_blocked_reason: &u.login_blocked_reason,
                last_login: u.last_login.map(iso),
                login_count: u.login_count,
                failed_login_count: u.failed_login_count,
                password_last_set: u.password_last_set.map(iso),
                password_last_emailed: u.password_last_emailed.map(iso),
                password_not_set_reason: &u.password_not_set_reason,
            },
            _links: &u.links,
            _allowed: allowed,
        }
    }
}

/// The user record as a JSON value (pages, audit).
pub fn user_view(u: &User, allowed: &[&str]) -> Value {
    serde_json::to_value(UserRecord::of(u, allowed)).expect("a user record serializes")
}

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

/// The writable fields of a request body.
struct UserInput {
    username: Option<String>,
    first_name: String,
    last_name: String,
    salutation: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    automatic_update: bool,
    excluded_from_user_activity: bool,
    company_account_id: Option<String>,
    login_blocked: bool,
    login_blocked_reason: Option<String>,
    status: String,
    primary_role: String,
    extra_roles: Vec<String>,
    data_access: DataAccess,
    password: Option<String>,
    api_access: Option<bool>,
}

pub fn valid_username(name: &str) -> bool {
    (1..=64).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '@' | '-'))
}

fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A user as POST and PUT take it: the record's writable fields, plus `password` and `api_access`. The
/// read-only parts of the record are accepted, so that a GET result can be sent back as it is (`status`
/// and `login_blocked_reason` are read at the top level or inside `_system_properties`); anything else
/// unknown is refused, naming the field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserBody {
    username: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    salutation: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    automatic_update: Option<bool>,
    excluded_from_user_activity: Option<bool>,
    company_account_id: Option<String>,
    login_blocked: Option<bool>,
    login_blocked_reason: Option<String>,
    status: Option<String>,
    roles: Option<RolesBody>,
    #[serde(rename = "data-access")]
    data_access: Option<DataAccessBody>,
    password: Option<String>,
    api_access: Option<bool>,
    #[serde(rename = "_system_properties")]
    system_properties: Option<SystemPropertiesBody>,
    #[serde(rename = "_links")]
    _links: Option<IgnoredAny>,
    #[serde(rename = "_allowed")]
    _allowed: Option<IgnoredAny>,
}

/// The record's read-only properties, of which only these two are read back.
#[derive(Deserialize)]
pub struct SystemPropertiesBody {
    status: Option<String>,
    login_blocked_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesBody {
    primary_role: Option<RoleRefBody>,
    extra_roles: Option<Vec<ExtraRoleBody>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleRefBody {
    role: Option<String>,
}

/// An extra role: its name, or `{"role": name}` as the record shows it.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum ExtraRoleBody {
    Name(String),
    Ref(RoleRefBody),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataAccessBody {
    organization: Option<Vec<OrganizationBody>>,
    segments: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrganizationBody {
    role: Option<String>,
    data_view: Option<String>,
    unit_group: Option<String>,
    unit_group_display_name: Option<String>,
}

/// At most this many characters in each text field of a user.
pub const USERNAME_MAX: usize = 64;
pub const NAME_MAX: usize = 100;
pub const SHORT_MAX: usize = 50;
pub const EMAIL_MAX: usize = 254;
pub const REASON_MAX: usize = 500;
pub const STATUS_MAX: usize = 16;
pub const ROLE_MAX: usize = 64;
pub const ACCESS_MAX: usize = 200;
pub const PASSWORD_MIN: usize = 8;
pub const PASSWORD_MAX: usize = 1024;

/// An optional text field within its limit.
fn optional(field: &str, value: Option<String>, max: usize) -> Result<Option<String>, ApiError> {
    if let Some(v) = &value {
        text(field, v, max)?;
    }
    Ok(value)
}

/// A required text field within its limit.
fn required(field: &str, value: Option<String>, max: usize) -> Result<String, ApiError> {
    let value = value.ok_or_else(|| ApiError::field(field, format!("{field} is required")))?;
    text(field, &value, max)?;
    Ok(value)
}

fn parse_user(body: UserBody) -> Result<UserInput, ApiError> {
    let username = optional("username", body.username, USERNAME_MAX)?;
    if let Some(name) = &username {
        if !valid_username(name) {
            return Err(ApiError::field(
                "username",
                "username must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', '@' and '-'",
            ));
        }
    }
    let email = optional("email", body.email, EMAIL_MAX)?;
    if let Some(email) = &email {
        if !valid_email(email) {
            return Err(ApiError::field(
                "email",
                "email must be an address such as name@example.com",
            ));
        }
    }

    // status and login_blocked_reason sit in _system_properties in the record; both places are read.
    let system = body.system_properties;
    let (status, status_field) = match body.status {
        Some(s) => (Some(s), "status"),
        None => (
            system.as_ref().and_then(|s| s.status.clone()),
            "_system_properties.status",
        ),
    };
    let status =
        optional(status_field, status, STATUS_MAX)?.unwrap_or_else(|| STATUS_ACTIVE.to_string());
    if status != STATUS_ACTIVE && status != STATUS_INACTIVE {
        return Err(ApiError::field(
            status_field,
            format!("status must be {STATUS_ACTIVE} or {STATUS_INACTIVE}, got {status:?}"),
        ));
    }
    let login_blocked_reason = match body.login_blocked_reason {
        Some(r) => optional("login_blocked_reason", Some(r), REASON_MAX)?,
        None => optional(
            "_system_properties.login_blocked_reason",
            system.and_then(|s| s.login_blocked_reason),
            REASON_MAX,
        )?,
    };

    let roles = body.roles.unwrap_or(RolesBody {
        primary_role: None,
        extra_roles: None,
    });
    let primary_role = required(
        "roles.primary_role.role",
        roles.primary_role.and_then(|p| p.role),
        ROLE_MAX,
    )?;
    let mut extra_roles: Vec<String> = Vec::new();
    for (i, item) in roles
        .extra_roles
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let field = format!("roles.extra_roles[{i}]");
        let name = match item {
            ExtraRoleBody::Name(name) => Some(name),
            ExtraRoleBody::Ref(r) => r.role,
        }
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            ApiError::field(
                &field,
                format!("{field} must be a role name or an object {{\"role\": name}}"),
            )
        })?;
        text(&field, &name, ROLE_MAX)?;
        if name == primary_role || extra_roles.contains(&name) {
            return Err(ApiError::field(
                &field,
                format!("{field}: role {name} is listed twice"),
            ));
        }
        extra_roles.push(name);
    }

    let mut data_access = DataAccess::default();
    if let Some(access) = body.data_access {
        for (i, entry) in access
            .organization
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let field = |name: &str| format!("data-access.organization[{i}].{name}");
            data_access.organization.push(OrganizationAccess {
                role: required(&field("role"), entry.role, ACCESS_MAX)?,
                data_view: required(&field("data_view"), entry.data_view, ACCESS_MAX)?,
                unit_group: required(&field("unit_group"), entry.unit_group, ACCESS_MAX)?,
                unit_group_display_name: required(
                    &field("unit_group_display_name"),
                    entry.unit_group_display_name,
                    ACCESS_MAX,
                )?,
            });
        }
        data_access.segments = access.segments.unwrap_or_default();
    }

    let password = optional("password", body.password, PASSWORD_MAX)?;
    if let Some(p) = &password {
        if p.chars().count() < PASSWORD_MIN {
            return Err(ApiError::field(
                "password",
                format!("password must be at least {PASSWORD_MIN} characters"),
            ));
        }
    }
    Ok(UserInput {
        username,
        first_name: optional("first_name", body.first_name, NAME_MAX)?.unwrap_or_default(),
        last_name: optional("last_name", body.last_name, NAME_MAX)?.unwrap_or_default(),
        salutation: optional("salutation", body.salutation, SHORT_MAX)?,
        email,
        phone: optional("phone", body.phone, SHORT_MAX)?,
        automatic_update: body.automatic_update.unwrap_or(false),
        excluded_from_user_activity: body.excluded_from_user_activity.unwrap_or(false),
        company_account_id: optional("company_account_id", body.company_account_id, NAME_MAX)?,
        login_blocked: body.login_blocked.unwrap_or(false),
        login_blocked_reason,
        status,
        primary_role,
        extra_roles,
        data_access,
        password,
        api_access: body.api_access,
    })
}

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
            return Err(ApiError::field(
                field,
                format!("role {role} does not exist in this company"),
            ));
        }
    }
    let roles: Vec<&str> = std::iter::once(input.primary_role.as_str())
        .chain(input.extra_roles.iter().map(String::as_str))
        .collect();
    let granted = directory::permissions_of_roles(&state.db, &caller.company, &roles).await?;
    caller.require_all(&granted, "the roles you assign")
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

async fn load(state: &AdminState, company: &str, username: &str) -> Result<User, ApiError> {
    directory::get_user(&state.db, company, username)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("user {username} not found")))
}

pub async fn list(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = Query::parse(&req, &["limit", "cursor", "status", "role"])?;
    let limit = q.limit()?;
    let after = q.cursor("users")?;
    let status = q.status_filter()?;
    let role = q.role_filter()?;
    let filter = UserFilter { status, role };
    let rows = directory::list_users(
        &state.db,
        &caller.company,
        &filter,
        after.as_deref(),
        limit + 1,
    )
    .await?;
    Ok(HttpResponse::Ok().json(page(
        "users",
        rows,
        limit,
        |u| u.username.clone(),
        |u| user_view(u, allowed(&caller, u)),
    )))
}

pub async fn get(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    username: Path<String>,
) -> Result<HttpResponse, ApiError> {
    // Reads go through the replica's short-lived cache; writes below always read the stored record.
    let key = (caller.company.clone(), username.into_inner());
    let user = match state.users.get(&key) {
        Some(user) => user,
        None => {
            let user = Arc::new(load(&state, &caller.company, &key.1).await?);
            state.users.insert(key, user.clone());
            user
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header(("ETag", crate::api::etag(user.version)))
        .json(UserRecord::of(&user, allowed(&caller, &user))))
}

pub async fn create(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    body: StrictJson<UserBody>,
) -> Result<HttpResponse, ApiError> {
    let input = parse_user(body.0)?;
    let username = input
        .username
        .clone()
        .ok_or_else(|| ApiError::field("username", "username is required"))?;
    check_roles(&state, &caller, &input).await?;
    let mut user = User::new(
        &caller.company,
        &username,
        &input.primary_role,
        caller.username(),
    );
    let password = input.password.clone();
    apply(&mut user, input);
    let mut audit_fields = audit_view(&user);
    match password {
        Some(p) => {
            user.password_hash = Some(hash_password(p).await?);
            user.password_last_set = Some(Utc::now());
            audit_fields.insert("password".into(), audit::CHANGED.into());
        }
        None => user.password_not_set_reason = Some(PASSWORD_NOT_SET.into()),
    }
    let mut tx = state.db.begin().await?;
    directory::insert_user(&mut tx, &user).await?;
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::CREATE,
            resource_type: audit::USER,
            resource_id: &user.username,
            version: Some(user.version),
            changes: changes(None, Some(&audit_fields)),
        },
    )
    .await?;
    Ok(created(
        &format!("/admin/v1/users/{}", user.username),
        user.version,
        user_view(&user, allowed(&caller, &user)),
    ))
}

pub async fn replace(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    username: Path<String>,
    req: HttpRequest,
    body: StrictJson<UserBody>,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &username).await?;
    require_if_match(&req, "user", current.version)?;
    let input = parse_user(body.0)?;
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
    if input.password.is_some() && !is_self && !caller.has(permissions::SET_PASSWORDS) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "setting the password of another user needs the {} permission",
                permissions::SET_PASSWORDS
            ),
        ));
    }
    let password = input.password.clone();
    let mut user = current.clone();
    apply(&mut user, input);
    let now = Utc::now();
    user.modified_on = now;
    user.modified_by = caller.username().to_string();
    user.version = current.version + 1;
    // Blocking, deactivating or re-activating ends every session, code and refresh token of the user.
    if current.can_log_in() != user.can_log_in() {
        user.sessions_valid_after_ms = Some(now.timestamp_millis());
    }
    let mut after = audit_view(&user);
    let password_hash = match password {
        Some(p) => {
            after.insert("password".into(), audit::CHANGED.into());
            Some(hash_password(p).await?)
        }
        None => None,
    };
    let mut tx = state.db.begin().await?;
    directory::update_user(&mut tx, &user).await?;
    if let Some(hash) = &password_hash {
        directory::set_password(&mut tx, &caller.company, &user.id, hash, now).await?;
        user.password_last_set = Some(now);
        user.password_not_set_reason = None;
        user.failed_login_count = 0;
        user.locked_until_ms = None;
        user.sessions_valid_after_ms = Some(now.timestamp_millis());
    }
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::REPLACE,
            resource_type: audit::USER,
            resource_id: &user.username,
            version: Some(user.version),
            changes: changes(Some(&audit_view(&current)), Some(&after)),
        },
    )
    .await?;
    Ok(ok_with_etag(
        user.version,
        user_view(&user, allowed(&caller, &user)),
    ))
}

pub async fn delete(
    caller: Caller<ManageUsers>,
    state: Data<AdminState>,
    username: Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &username).await?;
    if current.id == caller.user().id {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "you cannot delete your own account",
        ));
    }
    require_if_match(&req, "user", current.version)?;
    check_target(&state, &caller, &current).await?;
    let mut tx = state.db.begin().await?;
    if !directory::delete_user_if_version(
        &mut tx,
        &caller.company,
        &current.username,
        current.version,
    )
    .await?
    {
        return Err(ApiError::new(
            ErrorCode::PreconditionFailed,
            "the user was changed or deleted since you read it; read it again",
        ));
    }
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::DELETE,
            resource_type: audit::USER,
            resource_id: &current.username,
            version: None,
            changes: changes(Some(&audit_view(&current)), None),
        },
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
