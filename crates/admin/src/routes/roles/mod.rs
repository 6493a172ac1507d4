//! `/admin/v1/roles`: roles and the permissions they grant (permission Manage Roles). A caller may grant
//! only permissions it holds and may not change or delete a role granting one it lacks. A change and its
//! audit entry are one transaction. The body and its checks are in `body`, the record in `record`.

mod body;
mod record;

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use chrono::Utc;
use common::http::StrictJson;
use common::{ApiError, ErrorCode};
use directory::{new_role, Role, RoleFilter, UserFilter};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use utoipa::IntoParams;

use super::answer::{created, ok_with_etag};
use super::stored::{self, stored, Stored};
use crate::api::page;
use crate::audit;
use crate::caller::{Caller, ManageRoles};
use crate::precondition::IfMatch;
use crate::query::{encode_cursor, KeyCursor, Limit, NameFilter, Query, StatusFilter};
use crate::state::AdminState;

pub use body::{valid_role_name, RoleBody, RoleCreate};
pub use record::{role_view, RolePage, RoleRecord};

/// The fields an audit entry compares.
fn audit_view(r: &Role) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("name".into(), r.name.clone().into());
    map.insert("description".into(), r.description.clone().into());
    map.insert("permissions".into(), json!(r.permissions));
    map
}

stored!(Role {
    kind: audit::ROLE,
    key: name,
    audit: audit_view,
    find: directory::get_role,
    insert: directory::insert_role,
    update: directory::update_role,
    delete: directory::delete_role_if_version,
});

/// The query of the role listing.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RoleListQuery {
    #[param(inline)]
    limit: Option<Limit>,
    #[param(inline)]
    cursor: Option<KeyCursor>,
    /// Only roles held by at least one user with this status (any case).
    #[param(inline)]
    status: Option<StatusFilter>,
    /// Only the role with this name.
    #[param(inline)]
    role: Option<NameFilter>,
}

/// List roles
///
/// Keyset pages ordered by name. Requires the Manage Roles permission.
#[utoipa::path(get, operation_id = "listRoles", path = "/admin/v1/roles", tag = "roles",
    params(RoleListQuery),
    responses((status = 200, description = "A page of roles", body = RolePage)))]
pub async fn list(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    query: Query<RoleListQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.read()?;
    let limit = Limit::of(q.limit);
    let after = KeyCursor::after(q.cursor);
    let filter = RoleFilter {
        name: q.role.map(|r| r.0),
        held_by_status: q.status.map(|s| s.0),
    };
    let mut rows = directory::list_roles(
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
        |r| encode_cursor(&r.name),
        role_view,
    )))
}

/// Read a role
///
/// Requires the Manage Roles permission.
#[utoipa::path(get, operation_id = "getRole", path = "/admin/v1/roles/{name}", tag = "roles",
    params(("name" = String, Path, description = "The role's name")),
    responses(
        (status = 200, description = "The role", body = RoleRecord,
            headers(("ETag" = String, description = "W/\"<version>\"; send it back in If-Match"))),
        (status = 404, description = "No such role in the caller's company", body = common::error::ErrorBody)))]
pub async fn get(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    name: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let role: Role = stored::load(&state, &caller.company, &name).await?;
    Ok(ok_with_etag(role.version, role_view(&role)))
}

/// Create a role
///
/// Requires the Manage Roles permission and every permission granted.
#[utoipa::path(post, operation_id = "createRole", path = "/admin/v1/roles", tag = "roles",
    request_body = RoleCreate,
    responses(
        (status = 201, description = "The new role", body = RoleRecord,
            headers(("ETag" = String, description = "W/\"<version>\""), ("Location" = String, description = "The role's path"))),
        (status = 409, description = "A role with this name exists", body = common::error::ErrorBody)))]
pub async fn create(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    body: StrictJson<RoleBody>,
) -> Result<HttpResponse, ApiError> {
    let input = body.0.validate()?;
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
    let tx = state.db.begin().await?;
    stored::create(&state, tx, &caller, &role, &role.audit_view()).await?;
    Ok(created(
        &format!("/admin/v1/roles/{}", encode_segment(&role.name)),
        role.version,
        role_view(&role),
    ))
}

/// Replace a role
///
/// Roles are not renamed. Requires Manage Roles and every permission the role holds and grants.
#[utoipa::path(put, operation_id = "replaceRole", path = "/admin/v1/roles/{name}", tag = "roles",
    params(("name" = String, Path, description = "The role's name"), IfMatch),
    request_body = RoleBody,
    responses(
        (status = 200, description = "The changed role", body = RoleRecord,
            headers(("ETag" = String, description = "The new version, W/\"<version>\""))),
        (status = 404, description = "No such role in the caller's company", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn replace(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    name: Path<String>,
    if_match: IfMatch,
    body: StrictJson<RoleBody>,
) -> Result<HttpResponse, ApiError> {
    let current: Role = stored::load(&state, &caller.company, &name).await?;
    let input = body.0.validate()?;
    // As for clients: the body first, then the precondition (RFC 9110, section 13.2.1).
    if_match.require(Role::KIND, current.version)?;
    if input.name.as_deref().is_some_and(|n| n != current.name) {
        return Err(ApiError::field(
            "name",
            "a role cannot be renamed (name must match the path or be left out)",
        ));
    }
    caller.require_all(&current.permissions, &format!("role {}", current.name))?;
    caller.require_all(&input.permissions, "the role as changed")?;
    let mut role = current.clone();
    role.description = input.description;
    role.permissions = input.permissions;
    role.stamp(caller.username(), Utc::now());
    let tx = state.db.begin().await?;
    stored::replace(&state, tx, &caller, &current, &role, &role.audit_view()).await?;
    Ok(ok_with_etag(role.version, role_view(&role)))
}

/// Delete a role
///
/// A role held by any user (primary or extra) cannot be deleted.
#[utoipa::path(delete, operation_id = "deleteRole", path = "/admin/v1/roles/{name}", tag = "roles",
    params(("name" = String, Path, description = "The role's name"), IfMatch),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such role in the caller's company", body = common::error::ErrorBody),
        (status = 409, description = "The role is still held by users (in_use)", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn delete(
    caller: Caller<ManageRoles>,
    state: Data<AdminState>,
    name: Path<String>,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let current: Role = stored::load(&state, &caller.company, &name).await?;
    if_match.require(Role::KIND, current.version)?;
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
    stored::delete(&state, tx, &caller, &current).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A path segment with spaces and other reserved characters percent-encoded.
fn encode_segment(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}
