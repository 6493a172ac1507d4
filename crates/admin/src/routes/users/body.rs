//! The user body of POST and PUT `/admin/v1/users`: a typed struct that serde reads (unknown fields and
//! wrong types are refused with their path by `StrictJson`), then `validate` for what serde cannot say.
//! Every limit is one constant, used by the check and by the field's schema.

use std::borrow::Cow;
use std::sync::LazyLock;

use common::ApiError;
use directory::{DataAccess, OrganizationAccess, STATUS_ACTIVE, STATUS_INACTIVE};
use regex::Regex;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;
use utoipa::openapi::schema::Object;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::api::text;
use crate::schema;

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

/// Usernames: 1 to `USERNAME_MAX` characters (the schema's maxLength) of `A-Z a-z 0-9 . _ @ -`, at least
/// one a letter or digit: a name of dots only (`.`, `..`) would not survive the normalization of a URL
/// path.
pub const USERNAME_PATTERN: &str = "^[A-Za-z0-9._@-]*[A-Za-z0-9][A-Za-z0-9._@-]*$";
static USERNAME: LazyLock<Regex> = LazyLock::new(|| schema::compile(USERNAME_PATTERN));

pub fn valid_username(name: &str) -> bool {
    name.len() <= USERNAME_MAX && USERNAME.is_match(name)
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

/// The writable fields of a request body, checked.
pub struct UserInput {
    pub username: Option<String>,
    pub first_name: String,
    pub last_name: String,
    pub salutation: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub automatic_update: bool,
    pub excluded_from_user_activity: bool,
    pub company_account_id: Option<String>,
    pub login_blocked: bool,
    pub login_blocked_reason: Option<String>,
    pub status: String,
    pub primary_role: String,
    pub extra_roles: Vec<String>,
    pub data_access: DataAccess,
    pub password: Option<String>,
    pub api_access: Option<bool>,
}

/// A user as POST and PUT take it: the record's writable fields, plus `password` and `api_access`. The
/// read-only parts of the record (`_system_properties`, `_links`, `_allowed`) are accepted, so that a
/// GET result can be sent back as it is; `status` and `login_blocked_reason` are read at the top level or
/// inside `_system_properties`. Anything else is refused, naming the field.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = UserInput)]
pub struct UserBody {
    /// Required on POST; on PUT it must match the path or be left out (no renaming).
    #[schema(schema_with = username_schema)]
    pub username: Option<String>,
    #[schema(schema_with = schema::nullable_text::<NAME_MAX>)]
    first_name: Option<String>,
    #[schema(schema_with = schema::nullable_text::<NAME_MAX>)]
    last_name: Option<String>,
    #[schema(schema_with = schema::nullable_text::<SHORT_MAX>)]
    salutation: Option<String>,
    /// An address such as name@example.com: one `@`, a dotted domain, no spaces.
    #[schema(schema_with = email_schema)]
    email: Option<String>,
    #[schema(schema_with = schema::nullable_text::<SHORT_MAX>)]
    phone: Option<String>,
    automatic_update: Option<bool>,
    excluded_from_user_activity: Option<bool>,
    #[schema(schema_with = schema::nullable_text::<NAME_MAX>)]
    company_account_id: Option<String>,
    login_blocked: Option<bool>,
    #[schema(schema_with = schema::nullable_text::<REASON_MAX>)]
    login_blocked_reason: Option<String>,
    /// Default `ACTIVE`.
    #[schema(schema_with = status_schema)]
    status: Option<String>,
    #[schema(required = true, nullable = false)]
    roles: Option<RolesBody>,
    #[serde(rename = "data-access")]
    data_access: Option<DataAccessBody>,
    /// Stored as an argon2id hash, never shown; on PUT, left out keeps the current password.
    #[schema(schema_with = password_schema)]
    password: Option<String>,
    /// Whether the account may call this API; default false on POST, unchanged when left out on PUT.
    #[schema(write_only)]
    api_access: Option<bool>,
    #[serde(rename = "_system_properties")]
    system_properties: Option<SystemPropertiesBody>,
    #[serde(rename = "_links")]
    #[schema(schema_with = links_schema)]
    _links: Option<IgnoredAny>,
    #[serde(rename = "_allowed")]
    #[schema(schema_with = allowed_schema)]
    _allowed: Option<IgnoredAny>,
}

/// Read-only where the body replaces a user (it must be the path's), required on creation.
fn username_schema() -> Object {
    let mut username = schema::patterned(USERNAME_PATTERN, USERNAME_MAX, "jane.doe", false);
    username.read_only = Some(true);
    username
}

/// The characters no part of an e-mail address holds, as the inside of a character class: `@` (but the
/// one between the parts), whitespace, and what no text holds.
macro_rules! email_refused {
    () => {
        concat!(
            "@",
            schema::deceptive!(),
            r"\x20\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
        )
    };
}

/// What `valid_email` (with the text rule) takes: something, `@`, a domain with a dot neither first nor
/// last; no whitespace, control character or bidirectional override anywhere.
pub const EMAIL_PATTERN: &str = concat!(
    "^[^",
    email_refused!(),
    "]+@[^.",
    email_refused!(),
    "][^",
    email_refused!(),
    r"]*\.[^",
    email_refused!(),
    "]*[^.",
    email_refused!(),
    "]$"
);

fn email_schema() -> Object {
    let mut email = schema::nullable_text::<EMAIL_MAX>();
    email.pattern = Some(EMAIL_PATTERN.into());
    email.examples = vec!["jane.doe@example.com".into()];
    email
}

fn status_schema() -> Object {
    let mut status = schema::one_of(&[STATUS_ACTIVE, STATUS_INACTIVE], true);
    status.default = Some(STATUS_ACTIVE.into());
    status
}

fn password_schema() -> Object {
    let mut password = schema::nullable_text::<PASSWORD_MAX>();
    password.min_length = Some(PASSWORD_MIN);
    password.write_only = Some(true);
    password
}

fn links_schema() -> Object {
    schema::ignored("Read-only (the record's links), ignored")
}

fn allowed_schema() -> Object {
    schema::ignored("Read-only (the record's allowed methods), ignored")
}

/// The record's read-only properties: only `status` and `login_blocked_reason` are read (when not given
/// at the top level); the others are ignored.
#[derive(Deserialize, ToSchema)]
pub struct SystemPropertiesBody {
    #[schema(schema_with = status_schema)]
    status: Option<String>,
    #[schema(schema_with = schema::nullable_text::<REASON_MAX>)]
    login_blocked_reason: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RolesBody {
    #[schema(required = true, nullable = false)]
    primary_role: Option<RoleRefBody>,
    /// Role names, or objects `{"role": name}` as in the record. The roles are a set: a role named again
    /// (the primary included) counts once.
    #[schema(schema_with = extra_roles_schema)]
    extra_roles: Option<Vec<ExtraRoleBody>>,
}

/// A role by name, as the record shows it.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleRefBody {
    /// A role of the caller's company.
    #[schema(required = true, schema_with = role_name_schema)]
    role: Option<String>,
}

/// The extra roles; the example is empty, since any role named must exist in the caller's company.
fn extra_roles_schema() -> utoipa::openapi::schema::Array {
    utoipa::openapi::schema::ArrayBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::Type::Array,
            utoipa::openapi::Type::Null,
        ]))
        .items(ExtraRoleBody::schema())
        .examples([Value::Array(Vec::new())])
        .build()
}

fn role_name_schema() -> Object {
    let mut role = schema::name::<ROLE_MAX>();
    role.examples = vec!["Administrator".into()];
    role
}

/// An extra role: its name, or `{"role": name}` as the record shows it.
pub enum ExtraRoleBody {
    Name(String),
    Ref(RoleRefBody),
}

/// Read by hand rather than as an untagged enum, whose buffered variants would take `{"role": name}`
/// from an array too, and whose error would not say what is expected.
impl<'de> Deserialize<'de> for ExtraRoleBody {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Extra;
        impl<'de> serde::de::Visitor<'de> for Extra {
            type Value = ExtraRoleBody;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a role name or an object {\"role\": name}")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ExtraRoleBody, E> {
                Ok(ExtraRoleBody::Name(name.to_string()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ExtraRoleBody, A::Error> {
                RoleRefBody::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ExtraRoleBody::Ref)
            }
        }
        deserializer.deserialize_any(Extra)
    }
}

impl PartialSchema for ExtraRoleBody {
    fn schema() -> RefOr<Schema> {
        utoipa::openapi::schema::OneOfBuilder::new()
            .item(schema::name::<ROLE_MAX>())
            .item(utoipa::openapi::Ref::from_schema_name(RoleRefBody::name()))
            .into()
    }
}

impl ToSchema for ExtraRoleBody {
    fn name() -> Cow<'static, str> {
        "ExtraRole".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((RoleRefBody::name().into(), RoleRefBody::schema()));
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataAccessBody {
    organization: Option<Vec<OrganizationBody>>,
    /// Stored and shown as given.
    #[schema(value_type = Option<Vec<Value>>)]
    segments: Option<Vec<Value>>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Organization)]
pub struct OrganizationBody {
    #[schema(required = true, schema_with = schema::text::<ACCESS_MAX>)]
    role: Option<String>,
    #[schema(required = true, schema_with = schema::text::<ACCESS_MAX>)]
    data_view: Option<String>,
    #[schema(required = true, schema_with = schema::text::<ACCESS_MAX>)]
    unit_group: Option<String>,
    #[schema(required = true, schema_with = schema::text::<ACCESS_MAX>)]
    unit_group_display_name: Option<String>,
}

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

/// A status as given at `field`: `ACTIVE` or `INACTIVE`.
fn status_value(field: &str, status: Option<String>) -> Result<Option<String>, ApiError> {
    let status = optional(field, status, STATUS_MAX)?;
    match status.as_deref() {
        None | Some(STATUS_ACTIVE) | Some(STATUS_INACTIVE) => Ok(status),
        Some(other) => Err(ApiError::field(
            field,
            format!("status must be {STATUS_ACTIVE} or {STATUS_INACTIVE}, got {other:?}"),
        )),
    }
}

impl UserBody {
    /// The rules serde cannot express: lengths, the username pattern, the e-mail shape, control
    /// characters and bidirectional overrides, status values, required roles (a role named again counts once).
    pub fn validate(self) -> Result<UserInput, ApiError> {
        let username = optional("username", self.username, USERNAME_MAX)?;
        if let Some(name) = &username {
            if !valid_username(name) {
                return Err(ApiError::field(
                    "username",
                    format!(
                        "username must be 1 to {USERNAME_MAX} characters of A-Z, a-z, 0-9, '.', '_', '@' and '-'"
                    ),
                ));
            }
        }
        let email = optional("email", self.email, EMAIL_MAX)?;
        if let Some(email) = &email {
            if !valid_email(email) {
                return Err(ApiError::field(
                    "email",
                    "email must be an address such as name@example.com",
                ));
            }
        }

        // status and login_blocked_reason sit in _system_properties in the record; both places are read,
        // and both are checked when given (the top level wins).
        let (system_status, system_reason) = self
            .system_properties
            .map_or((None, None), |s| (s.status, s.login_blocked_reason));
        let system_status = status_value("_system_properties.status", system_status)?;
        let status = status_value("status", self.status)?
            .or(system_status)
            .unwrap_or_else(|| STATUS_ACTIVE.to_string());
        let system_reason = optional(
            "_system_properties.login_blocked_reason",
            system_reason,
            REASON_MAX,
        )?;
        let login_blocked_reason = optional(
            "login_blocked_reason",
            self.login_blocked_reason,
            REASON_MAX,
        )?
        .or(system_reason);

        let roles = self.roles.unwrap_or(RolesBody {
            primary_role: None,
            extra_roles: None,
        });
        let primary_role = required(
            "roles.primary_role.role",
            roles.primary_role.and_then(|p| p.role),
            ROLE_MAX,
        )?;
        if primary_role.is_empty() {
            return Err(ApiError::field(
                "roles.primary_role.role",
                "roles.primary_role.role must be a role name",
            ));
        }
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
            if name != primary_role && !extra_roles.contains(&name) {
                extra_roles.push(name);
            }
        }

        let mut data_access = DataAccess::default();
        if let Some(access) = self.data_access {
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

        let password = optional("password", self.password, PASSWORD_MAX)?;
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
            first_name: optional("first_name", self.first_name, NAME_MAX)?.unwrap_or_default(),
            last_name: optional("last_name", self.last_name, NAME_MAX)?.unwrap_or_default(),
            salutation: optional("salutation", self.salutation, SHORT_MAX)?,
            email,
            phone: optional("phone", self.phone, SHORT_MAX)?,
            automatic_update: self.automatic_update.unwrap_or(false),
            excluded_from_user_activity: self.excluded_from_user_activity.unwrap_or(false),
            company_account_id: optional("company_account_id", self.company_account_id, NAME_MAX)?,
            login_blocked: self.login_blocked.unwrap_or(false),
            login_blocked_reason,
            status,
            primary_role,
            extra_roles,
            data_access,
            password,
            api_access: self.api_access,
        })
    }
}

/// The body of POST `/admin/v1/users` as documented: `UserInput` with `username` required. The handler
/// reads a `UserBody` and refuses a missing username itself.
pub struct UserCreate;

impl PartialSchema for UserCreate {
    fn schema() -> RefOr<Schema> {
        schema::requiring(
            UserBody::schema(),
            "username",
            "UserInput as POST takes it: username is required",
        )
    }
}

impl ToSchema for UserCreate {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        <UserBody as ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented e-mail rule is the check (with the text rule) on every character, alone and in
    /// each part of an address, and on addresses at the edges of the rule.
    #[test]
    fn emails_are_checked_as_their_schema_says() {
        let pattern = regex::Regex::new(EMAIL_PATTERN).unwrap();
        let checked =
            |email: &str| valid_email(email) && crate::api::text("email", email, EMAIL_MAX).is_ok();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            for email in [
                format!("a{c}@b.c"),
                format!("a@b{c}.c"),
                format!("a@b.{c}"),
                format!("a@{c}.c"),
            ] {
                assert_eq!(pattern.is_match(&email), checked(&email), "{email:?}");
            }
        }
        for email in [
            "a@b.c", "a@b", "@b.c", "a@.b", "a@b.", "a@@b.c", "a@b@c.d", "a@b..c", "a b@c.d", "",
        ] {
            assert_eq!(pattern.is_match(email), checked(email), "{email:?}");
        }
    }

    /// Text fields are documented with the text rule: no control characters or bidirectional overrides.
    #[test]
    fn text_is_checked_as_its_schema_says() {
        let pattern = regex::Regex::new(schema::TEXT_PATTERN).unwrap();
        let names = regex::Regex::new(crate::routes::clients::body::NAME_PATTERN).unwrap();
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let value = format!("a{c}");
            let checked = crate::api::text("f", &value, 10).is_ok();
            assert_eq!(pattern.is_match(&value), checked, "{c:?}");
            let alone = c.to_string();
            let name = crate::api::text("name", &alone, 10).is_ok() && !alone.trim().is_empty();
            assert_eq!(names.is_match(&alone), name, "client name {c:?}");
        }
    }

    #[test]
    fn usernames_are_checked_as_their_schema_says() {
        // The schema states the length (maxLength) beside the pattern, which needs a letter or digit.
        let schema = serde_json::to_value(username_schema()).unwrap();
        assert_eq!(schema["maxLength"], USERNAME_MAX);
        assert_eq!(schema["pattern"], USERNAME_PATTERN);
        assert!(valid_username("jane.doe@x-y_z"));
        assert!(valid_username("x") && valid_username("..x.."));
        assert!(!valid_username(".") && !valid_username("..") && !valid_username("@-_"));
        assert!(!valid_username(""));
        assert!(!valid_username("has space"));
        assert!(!valid_username(&"a".repeat(USERNAME_MAX + 1)));
    }
}
