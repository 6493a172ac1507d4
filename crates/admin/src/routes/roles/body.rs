//! The role body of POST and PUT `/admin/v1/roles`: a typed struct serde reads (unknown fields and wrong
//! types are refused with their path by `StrictJson`), then `validate` for what serde cannot say. Every
//! limit is one constant, used by the check and by the field's schema.

use std::sync::LazyLock;

use common::ApiError;
use directory::permissions;
use regex::Regex;
use serde::de::IgnoredAny;
use serde::Deserialize;
use utoipa::openapi::schema::Object;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::api::text;
use crate::schema;

/// At most this many characters in a role's name, description and each permission.
pub const NAME_MAX: usize = 64;
pub const DESCRIPTION_MAX: usize = 500;
pub const PERMISSION_MAX: usize = 100;

/// Role names: 1 to `NAME_MAX` characters of letters, digits, space, `.`, `_` and `-`, not starting or
/// ending with a space. (No `,`, which separates role names where a user's roles are read together, and
/// no `"`, `\` or `%`, which the role filter of the user listing relies on.)
pub const NAME_PATTERN: &str =
    "^[A-Za-z0-9._-][A-Za-z0-9 ._-]{0,62}[A-Za-z0-9._-]$|^[A-Za-z0-9._-]$";
static ROLE_NAME: LazyLock<Regex> = LazyLock::new(|| schema::compile(NAME_PATTERN));

pub fn valid_role_name(name: &str) -> bool {
    ROLE_NAME.is_match(name)
}

pub struct RoleInput {
    pub name: Option<String>,
    pub description: String,
    pub permissions: Vec<String>,
}

/// A role as POST and PUT take it. The read-only parts of the record are accepted (and ignored), so that a
/// GET result can be sent back as it is; anything else unknown is refused, naming the field.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RoleInput)]
pub struct RoleBody {
    /// Required on POST; on PUT it must match the path (roles are not renamed).
    #[schema(schema_with = name_schema)]
    name: Option<String>,
    /// No control characters or bidirectional overrides.
    #[schema(schema_with = schema::nullable_text::<DESCRIPTION_MAX>)]
    description: Option<String>,
    /// Each permission once; a caller grants only permissions it holds.
    #[schema(schema_with = permissions_schema)]
    permissions: Option<Vec<String>>,
    #[serde(rename = "_system_properties")]
    #[schema(schema_with = system_properties_schema)]
    _system_properties: Option<IgnoredAny>,
    #[serde(rename = "_allowed")]
    #[schema(schema_with = allowed_schema)]
    _allowed: Option<IgnoredAny>,
}

/// Read-only where the body replaces a role (it must be the path's), required on creation.
fn name_schema() -> Object {
    let mut name = schema::patterned(NAME_PATTERN, NAME_MAX, "Team Lead", false);
    name.read_only = Some(true);
    name
}

fn permissions_schema() -> RefOr<Schema> {
    schema::list_of(schema::one_of(permissions::ALL, false), 0, true)
}

fn system_properties_schema() -> Object {
    schema::ignored("Read-only (the record's system properties), ignored")
}

fn allowed_schema() -> Object {
    schema::ignored("Read-only (the record's allowed methods), ignored")
}

impl RoleBody {
    /// The rules serde cannot express: the name pattern, lengths, control characters and bidirectional
    /// overrides, known permissions (each kept once).
    pub fn validate(self) -> Result<RoleInput, ApiError> {
        if let Some(name) = &self.name {
            text("name", name, NAME_MAX)?;
            if !valid_role_name(name) {
                return Err(ApiError::field(
                    "name",
                    format!("name must be 1 to {NAME_MAX} characters of letters, digits, space, '.', '_' and '-'"),
                ));
            }
        }
        let description = self.description.unwrap_or_default();
        text("description", &description, DESCRIPTION_MAX)?;
        let mut granted: Vec<String> = Vec::new();
        for (i, p) in self.permissions.unwrap_or_default().into_iter().enumerate() {
            let field = format!("permissions[{i}]");
            if p.is_empty() {
                return Err(ApiError::field(
                    &field,
                    format!("{field} must not be empty"),
                ));
            }
            text(&field, &p, PERMISSION_MAX)?;
            if !permissions::ALL.contains(&p.as_str()) {
                return Err(ApiError::field(
                    &field,
                    format!(
                        "{field}: unknown permission {p:?}; known are {}",
                        permissions::ALL.join(", ")
                    ),
                ));
            }
            if !granted.contains(&p) {
                granted.push(p);
            }
        }
        Ok(RoleInput {
            name: self.name,
            description,
            permissions: granted,
        })
    }
}

/// The body of POST `/admin/v1/roles` as documented: `RoleInput` with `name` required. The handler reads
/// a `RoleBody` and refuses a missing name itself.
pub struct RoleCreate;

impl PartialSchema for RoleCreate {
    fn schema() -> RefOr<Schema> {
        schema::requiring(
            RoleBody::schema(),
            "name",
            "RoleInput as POST takes it: name is required",
        )
    }
}

impl ToSchema for RoleCreate {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_follow_the_pattern() {
        assert!(NAME_PATTERN.contains(&format!("{{0,{}}}", NAME_MAX - 2)));
        assert!(valid_role_name("Team Lead"));
        assert!(valid_role_name("x"));
        assert!(!valid_role_name(" lead"));
        assert!(!valid_role_name("lead "));
        assert!(!valid_role_name("a%b"));
        assert!(!valid_role_name(""));
        assert!(valid_role_name(&"a".repeat(NAME_MAX)));
        assert!(!valid_role_name(&"a".repeat(NAME_MAX + 1)));
    }
}
