//! The user record as every answer shows it (docs/admin-api.md), serialized straight from the stored
//! user; its schema is generated from the same struct.

use directory::{OrganizationAccess, User};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::api::iso;

/// The user record of docs/admin-api.md, field for field and in its order; nullable fields are present
/// as null. Serialized straight from the stored user, without building an intermediate JSON tree.
#[derive(Serialize, ToSchema)]
pub struct UserRecord<'a> {
    username: &'a str,
    first_name: &'a str,
    last_name: &'a str,
    #[schema(required = true)]
    salutation: &'a Option<String>,
    #[schema(required = true)]
    email: &'a Option<String>,
    #[schema(required = true)]
    phone: &'a Option<String>,
    automatic_update: bool,
    excluded_from_user_activity: bool,
    #[schema(required = true)]
    company_account_id: &'a Option<String>,
    login_blocked: bool,
    roles: RolesView<'a>,
    #[serde(rename = "data-access")]
    data_access: DataAccessView<'a>,
    _system_properties: SystemProperties<'a>,
    /// Set by other writers; not writable here.
    #[schema(required = true, value_type = Option<Value>)]
    _links: &'a Option<Value>,
    /// The methods the caller may use on this record (no DELETE on the caller's own).
    #[schema(value_type = Vec<String>)]
    _allowed: &'a [&'a str],
}

#[derive(Serialize, ToSchema)]
#[schema(as = UserRoleRef)]
struct RoleRef<'a> {
    role: &'a str,
}

/// The primary role and the extra roles, in the same shape.
#[derive(Serialize, ToSchema)]
#[schema(as = UserRoles)]
struct RolesView<'a> {
    primary_role: RoleRef<'a>,
    extra_roles: Vec<RoleRef<'a>>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = UserDataAccess)]
struct DataAccessView<'a> {
    #[schema(value_type = Vec<super::body::OrganizationBody>)]
    organization: &'a [OrganizationAccess],
    #[schema(value_type = Vec<Value>)]
    segments: &'a [Value],
}

/// Read-only properties; timestamps are ISO 8601 UTC with milliseconds. The login facts are written by
/// the token service.
#[derive(Serialize, ToSchema)]
#[schema(as = UserSystemProperties)]
struct SystemProperties<'a> {
    /// `ACTIVE` or `INACTIVE`.
    status: &'a str,
    created_on: String,
    #[schema(required = true)]
    created_by: &'a Option<String>,
    modified_on: String,
    modified_by: &'a str,
    #[schema(required = true)]
    login_blocked_reason: &'a Option<String>,
    #[schema(required = true)]
    last_login: Option<String>,
    login_count: i64,
    failed_login_count: i64,
    /// Null only for a user created without a password.
    #[schema(required = true)]
    password_last_set: Option<String>,
    #[schema(required = true)]
    password_last_emailed: Option<String>,
    #[schema(required = true)]
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

/// The user record, its fields in the record's order.
pub fn user_view<'a>(u: &'a User, allowed: &'a [&'a str]) -> UserRecord<'a> {
    UserRecord::of(u, allowed)
}

/// A page of user records, as the listing answers it.
pub type UserPage<'a> = crate::api::Page<UserRecord<'a>>;
