//! `/v3/projects`: the projects (app keys) of the token's company. Reading needs `events:read`; creating,
//! changing and deleting need `events:manage`. Deleting a project deletes its events.

use actix_web::{web, HttpRequest, HttpResponse};
use common::http::StrictJson;
use common::ApiError;
use serde::Deserialize;

use crate::access::{self, MANAGE_SCOPE, READ_SCOPE};
use crate::model::{new_app_key, Project};
use crate::state::IngestState;
use crate::store;

/// The most characters in a project's name.
pub const NAME_MAX: usize = 100;
/// A name as the check below reads it: not blank, no control character (the schema's dialect has no
/// Unicode classes, so the control characters are spelled out: C0, DEL and C1).
const NAME_PATTERN: &str = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$";

/// A project as created or replaced.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectBody {
    /// Unique within the company; 1 to 100 characters, not all white space, no control character.
    /// Stored without white space at either end.
    #[schema(schema_with = name_schema)]
    pub name: String,
    /// Override event time with server time (default false).
    #[serde(default)]
    pub server_time: bool,
}

fn name_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .min_length(Some(1))
        .max_length(Some(NAME_MAX))
        .pattern(Some(NAME_PATTERN))
        .examples(["web"])
        .build()
}

impl ProjectBody {
    fn checked(self) -> Result<ProjectBody, ApiError> {
        let name = self.name.trim();
        if name.is_empty()
            || self.name.chars().count() > NAME_MAX
            || name.chars().any(char::is_control)
        {
            return Err(ApiError::field(
                "name",
                format!(
                    "a project name has 1 to {NAME_MAX} characters, not all white space, none of \
                     them control characters"
                ),
            ));
        }
        Ok(ProjectBody {
            name: name.to_string(),
            ..self
        })
    }
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ProjectList {
    pub projects: Vec<Project>,
}

#[utoipa::path(get, operation_id = "list_projects", path = "/v3/projects", tag = "projects",
    responses((status = 200, description = "The company's projects", body = ProjectList),
        (status = 401, description = "No valid token", body = common::error::ErrorBody),
        (status = 403, description = "The token lacks events:read", body = common::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn list(
    state: web::Data<IngestState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let claims = access::authorize(&state, &req, READ_SCOPE).await?;
    let projects = store::projects(&state.db, &claims.company).await?;
    Ok(HttpResponse::Ok().json(ProjectList { projects }))
}

#[utoipa::path(post, path = "/v3/projects", tag = "projects", request_body = ProjectBody,
    responses((status = 201, description = "The new project with its app key", body = Project),
        (status = 400, description = "The body is not a valid project", body = common::error::ErrorBody),
        (status = 409, description = "The company has a project of that name", body = common::error::ErrorBody),
        (status = 401, description = "No valid token", body = common::error::ErrorBody),
        (status = 403, description = "The token lacks events:manage", body = common::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn create(
    state: web::Data<IngestState>,
    req: HttpRequest,
    body: StrictJson<ProjectBody>,
) -> Result<HttpResponse, ApiError> {
    let claims = access::authorize(&state, &req, MANAGE_SCOPE).await?;
    let body = body.0.checked()?;
    let project = Project {
        app_key: new_app_key(),
        company: claims.company.clone(),
        name: body.name,
        server_time: body.server_time,
        created_at: common::db::now(),
    };
    store::insert_project(&state.db, &project).await?;
    Ok(HttpResponse::Created().json(project))
}

#[utoipa::path(get, path = "/v3/projects/{app_key}", tag = "projects",
    params(("app_key" = String, Path, description = "The project's app key")),
    responses((status = 200, description = "The project", body = Project),
        (status = 404, description = "No such project for the token's company", body = common::error::ErrorBody),
        (status = 401, description = "No valid token", body = common::error::ErrorBody),
        (status = 403, description = "The token lacks events:read", body = common::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn get(
    state: web::Data<IngestState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let claims = access::authorize(&state, &req, READ_SCOPE).await?;
    let project = access::own_project(&state, &claims, &path).await?;
    Ok(HttpResponse::Ok().json(project))
}

#[utoipa::path(put, path = "/v3/projects/{app_key}", tag = "projects", request_body = ProjectBody,
    params(("app_key" = String, Path, description = "The project's app key")),
    responses((status = 200, description = "The project as changed", body = Project),
        (status = 400, description = "The body is not a valid project", body = common::error::ErrorBody),
        (status = 404, description = "No such project for the token's company", body = common::error::ErrorBody),
        (status = 409, description = "The company has a project of that name", body = common::error::ErrorBody),
        (status = 401, description = "No valid token", body = common::error::ErrorBody),
        (status = 403, description = "The token lacks events:manage", body = common::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn replace(
    state: web::Data<IngestState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: StrictJson<ProjectBody>,
) -> Result<HttpResponse, ApiError> {
    let claims = access::authorize(&state, &req, MANAGE_SCOPE).await?;
    let body = body.0.checked()?;
    let mut project = access::own_project(&state, &claims, &path).await?;
    project.name = body.name;
    project.server_time = body.server_time;
    if !store::update_project(&state.db, &project).await? {
        return Err(ApiError::not_found(format!(
            "no project with app key {}",
            project.app_key
        )));
    }
    state.projects.remove(&project.app_key);
    Ok(HttpResponse::Ok().json(project))
}

#[utoipa::path(delete, path = "/v3/projects/{app_key}", tag = "projects",
    params(("app_key" = String, Path, description = "The project's app key")),
    responses((status = 204, description = "The project and its events are gone"),
        (status = 404, description = "No such project for the token's company", body = common::error::ErrorBody),
        (status = 401, description = "No valid token", body = common::error::ErrorBody),
        (status = 403, description = "The token lacks events:manage", body = common::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn delete(
    state: web::Data<IngestState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let claims = access::authorize(&state, &req, MANAGE_SCOPE).await?;
    let project = access::own_project(&state, &claims, &path).await?;
    let mut tx = state.db.begin().await?;
    store::delete_project(&mut tx, &project.app_key).await?;
    tx.commit().await?;
    state.projects.remove(&project.app_key);
    Ok(HttpResponse::NoContent().finish())
}
