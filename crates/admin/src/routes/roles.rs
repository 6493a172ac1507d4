//! `/admin/v1/roles`: roles and the permissions they grant (permission Manage Roles). A caller may grant
//! only permissions it holds and may not change or delete a role granting one it lacks. A change and its
//! audit entry are one transaction.

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use chrono::Utc;
use common::http::StrictJson;
use common::{ApiError, ErrorCode};
use directory::{new_role, permissions, Role, RoleFilter, UserFilter};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{created, ok_with_etag};
use crate::api::{changes, iso, page, require_if_match, text, Query};
use crate::audit::{self, Change};
use crate::caller::{Caller, ManageRoles};
use crate::state::AdminState;

const ALLOWED: &[&str] = &["GET", "PUT", "DELETE"];

pub fn role_view(r: &Role) -> Value {
    json!({
        "name": r.name,
        "description": r.description,
        "permissions": r.permissions,
        "_system_properties": {
            "created_on": iso(r.created_on),
            "created_by": r.created_by,
            "modified_on": iso(r.modified_on),
            "modified_by": r.modified_by,
        },
        "_allowed": ALLOWED,
    })
}

fn audit_view(r: &Role) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("name".into(), r.name.clone().into());
    map.insert("description".into(), r.description.clone().into());
    map.insert("permissions".into(), json!(r.permissions));
    map
}

/// Role names: 1 to 64 characters of letters, digits, space, `.`, `_` and `-`, not starting or ending
/// with a space. (No `,`, which separates role names where a user's roles are read together.)
pub fn valid_role_name(name: &str) -> bool {
    (1..=64).contains(&name.chars().count())
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | '_' | '-'))
}

struct RoleInput {
    name: Option<String>,
    description: String,
    permissions: Vec<String>,
}

/// A role as POST and PUT take it. The read-only parts of the record are accepted (and ignored), so that a
/// GET result can be sent back as it is; anything else unknown is refused, naming the field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleBody {
    name: Option<String>,
    description: Option<String>,
    permissions: Option<Vec<String>>,
    #[serde(rename = "_system_properties")]
    _system_properties: Option<IgnoredAny>,
    #[serde(rename = "_allowed")]
    _allowed: Option<IgnoredAny>,
}

/// At most this many characters in a role's name, description and each permission.
pub const NAME_MAX: usize = 64;
pub const DESCRIPTION_MAX: usize = 500;
pub const PERMISSION_MAX: usize = 100;

fn parse_role(body: RoleBody) -> Result<RoleInput, ApiError> {
    if let Some(name) = &body.name {
        text("name", name, NAME_MAX)?;
        if !valid_role_name(name) {
            return Err(ApiError::field(
                "name",
                "name must be 1 to 64 characters of letters, digits, space, '.', '_' and '-'",
            ));
        }
    }
    let description = body.description.unwrap_or_default();
    text("description", &description, DESCRIPTION_MAX)?;
    let mut granted: Vec<String> = Vec::new();
    for (i, p) in body.permissions.unwrap_or_default().into_iter().enumerate() {
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
        name: body.name,
        description,
        permissions: granted,
    })
}

async fn load(state: &AdminState, company: &str, name: &str) -> Result<Role, ApiError> {
    directory::get_role(&state.db, company, name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("role {name} not found")))
}

pub async fn list(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = Query::parse(&req, &["limit", "cursor", "status", "role"])?;
    let limit = q.limit()?;
    let after = q.cursor("roles")?;
    let held_by_status = q.status_filter()?;
    let name = q.role_filter()?;
    let filter = RoleFilter {
        name,
        held_by_status,
    };
    let rows = directory::list_roles(
        &state.db,
        &caller.company,
        &filter,
        after.as_deref(),
        limit + 1,
    )
    .await?;
    Ok(HttpResponse::Ok().json(page("roles", rows, limit, |r| r.name.clone(), role_view)))
}

pub async fn get(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    name: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let role = load(&state, &caller.company, &name).await?;
    Ok(ok_with_etag(role.version, role_view(&role)))
}

pub async fn create(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    body: StrictJson<RoleBody>,
) -> Result<HttpResponse, ApiError> {
    let input = parse_role(body.0)?;
    let name = input
        .name
        .ok_or_else(|| ApiError::field("name", "name is required"))?;
    caller.require_all(&input.permissions, "the role you create")?;
    let permissions: Vec<&str> = input.permissions.iter().map(String::as_str).collect();
    let role = new_role(
        &caller.company,
        &name,
        &input.description,
        &permissions,
        caller.username(),
    );
    let mut tx = state.db.begin().await?;
    directory::insert_role(&mut tx, &role).await?;
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::CREATE,
            resource_type: audit::ROLE,
            resource_id: &role.name,
            version: Some(role.version),
            changes: changes(None, Some(&audit_view(&role))),
        },
    )
    .await?;
    Ok(created(
        &format!("/admin/v1/roles/{}", encode_segment(&role.name)),
        role.version,
        role_view(&role),
    ))
}

pub async fn replace(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    name: Path<String>,
    req: HttpRequest,
    body: StrictJson<RoleBody>,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &name).await?;
    require_if_match(&req, "role", current.version)?;
    let input = parse_role(body.0)?;
    if input.name.as_deref().is_some_and(|n| n != current.name) {
        return Err(ApiError::field(
            "name",
            "a role cannot be renamed (name must match the path or be left out)",
        ));
    }
    caller.require_all(&current.permissions, &format!("role {}", current.name))?;
    caller.require_all(&input.permissions, "the permissions you grant")?;
    let mut role = current.clone();
    role.description = input.description;
    role.permissions = input.permissions;
    role.modified_on = Utc::now();
    role.modified_by = caller.username().to_string();
    role.version = current.version + 1;
    let mut tx = state.db.begin().await?;
    directory::update_role(&mut tx, &role).await?;
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::REPLACE,
            resource_type: audit::ROLE,
            resource_id: &role.name,
            version: Some(role.version),
            changes: changes(Some(&audit_view(&current)), Some(&audit_view(&role))),
        },
    )
    .await?;
    Ok(ok_with_etag(role.version, role_view(&role)))
}

pub async fn delete(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    name: Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &name).await?;
    require_if_match(&req, "role", current.version)?;
    caller.require_all(&current.permissions, &format!("role {}", current.name))?;
    // The check and the deletion are one transaction; the foreign key of the user's roles backs it.
    let mut tx = state.db.begin().await?;
    let holders = directory::list_users(
        &mut tx,
        &caller.company,
        &UserFilter {
            status: None,
            role: Some(current.name.clone()),
        },
        None,
        1,
    )
    .await?;
    if let Some(holder) = holders.first() {
        return Err(ApiError::new(
            ErrorCode::InUse,
            format!(
                "role {} is still held by users (for example {}); reassign them first",
                current.name, holder.username
            ),
        ));
    }
    if !directory::delete_role_if_version(&mut tx, &caller.company, &current.name, current.version)
        .await?
    {
        return Err(ApiError::new(
            ErrorCode::PreconditionFailed,
            "the role was changed or deleted since you read it; read it again",
        ));
    }
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::DELETE,
            resource_type: audit::ROLE,
            resource_id: &current.name,
            version: None,
            changes: changes(Some(&audit_view(&current)), None),
        },
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A path segment with spaces and other reserved characters percent-encoded.
fn encode_segment(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}
