//! The role record as every answer shows it (docs/admin-api.md); its schema is generated from the same
//! struct.

use directory::Role;
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::iso;

const ALLOWED: &[&str] = &["GET", "PUT", "DELETE"];

/// A role and the permissions it grants.
#[derive(Serialize, ToSchema)]
#[schema(as = Role)]
pub struct RoleRecord<'a> {
    name: &'a str,
    description: &'a str,
    #[schema(value_type = Vec<String>)]
    permissions: &'a [String],
    _system_properties: RoleSystemProperties<'a>,
    #[schema(value_type = Vec<String>)]
    _allowed: &'static [&'static str],
}

/// Read-only properties; timestamps are ISO 8601 UTC with milliseconds.
#[derive(Serialize, ToSchema)]
pub struct RoleSystemProperties<'a> {
    created_on: String,
    #[schema(required = true)]
    created_by: &'a Option<String>,
    modified_on: String,
    modified_by: &'a str,
}

impl<'a> RoleRecord<'a> {
    pub fn of(r: &'a Role) -> RoleRecord<'a> {
        RoleRecord {
            name: &r.name,
            description: &r.description,
            permissions: &r.permissions,
            _system_properties: RoleSystemProperties {
                created_on: iso(r.created_on),
                created_by: &r.created_by,
                modified_on: iso(r.modified_on),
                modified_by: &r.modified_by,
            },
            _allowed: ALLOWED,
        }
    }
}

pub fn role_view(r: &Role) -> RoleRecord<'_> {
    RoleRecord::of(r)
}

/// A page of roles, as the listing answers it.
pub type RolePage<'a> = crate::api::Page<RoleRecord<'a>>;
