//! `/config/<company>[/<organization>[/<folder>]]`: companies, organizations (with their time zone) and
//! folders (docs/analytics-api.md, Configuration). `POST` creates (409 when it exists), `PUT` creates or
//! replaces, `GET` reads with the deletion `status`, `DELETE` starts a deletion job on the bus and answers
//! at once; the job removes every row, stored object and search document, then the object reads as
//! `Folder not found: <name>`. Nothing can be added to what is being deleted.

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use analytics_store::STATUS_DELETING;
use scoring::model::{
    parse_timezone, CompanyBody, CompanyRecord, FolderRecord, FolderSettings, OrganizationBody,
    OrganizationRecord,
};
use scoring::names::CompanyName;

use super::body::{json_object_body, Body};
use crate::access::{Authorized, Read, Write};
use crate::error::AnalyticsError;
use crate::routes::paths::{FolderPath, OrganizationPath};
use crate::scopes::changes::{self, Mode};
use crate::scopes::{company_scope, folder_scope, organization_scope, records};
use crate::state::AnalyticsState;

type Answer = Result<HttpResponse, AnalyticsError>;

/// The answer to a `DELETE`: the deletion runs on; `GET` reports its progress.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct DeletionStarted {
    /// Always `deleting`.
    pub status: &'static str,
}

fn deletion_started() -> HttpResponse {
    HttpResponse::Ok().json(DeletionStarted {
        status: STATUS_DELETING,
    })
}

// --- companies ---------------------------------------------------------------------------------------

/// Read a company
#[utoipa::path(get, path = "/config/{company}", tag = "config",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path)),
    responses((status = 200, body = CompanyRecord), (status = 404, description = "Folder not found: <company>")))]
pub async fn get_company(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<CompanyName>,
) -> Answer {
    let company = path.into_inner();
    Ok(HttpResponse::Ok().json(records::company(&state, &company).await?))
}

async fn write_company(
    state: &AnalyticsState,
    company: &CompanyName,
    body: &[u8],
    mode: Mode,
) -> Answer {
    company.check()?;
    let body: CompanyBody = json_object_body(body)?;
    let name = body.name.unwrap_or_else(|| company.to_string());
    scoring::names::check_value("name", &name)?;
    changes::write_company(state, company, &name, mode).await?;
    Ok(HttpResponse::Ok().json(records::company(state, company).await?))
}

/// Create a company
#[utoipa::path(post, path = "/config/{company}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = CompanyBody,
    params(("company" = String, Path)),
    responses((status = 200, body = CompanyRecord), (status = 409, description = "It exists")))]
pub async fn create_company(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<CompanyName>,
    body: Body,
) -> Answer {
    write_company(&state, &path.into_inner(), &body, Mode::Create).await
}

/// Create or replace a company
#[utoipa::path(put, path = "/config/{company}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = CompanyBody,
    params(("company" = String, Path)),
    responses((status = 200, body = CompanyRecord), (status = 409, description = "It is being deleted")))]
pub async fn replace_company(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<CompanyName>,
    body: Body,
) -> Answer {
    write_company(&state, &path.into_inner(), &body, Mode::Replace).await
}

/// Delete a company with everything in it
#[utoipa::path(delete, path = "/config/{company}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path)),
    responses((status = 200, description = "The deletion has started", body = DeletionStarted),
        (status = 404, description = "Folder not found: <company>")))]
pub async fn delete_company(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<CompanyName>,
) -> Answer {
    changes::delete(&state, &company_scope(&path.into_inner())).await?;
    Ok(deletion_started())
}

// --- organizations -----------------------------------------------------------------------------------

/// Read an organization
#[utoipa::path(get, path = "/config/{company}/{organization}", tag = "config",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path)),
    responses((status = 200, body = OrganizationRecord), (status = 404, description = "Folder not found: <organization>")))]
pub async fn get_organization(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<OrganizationPath>,
) -> Answer {
    let OrganizationPath {
        company,
        organization,
    } = path.into_inner();
    Ok(HttpResponse::Ok().json(records::organization(&state, &company, &organization).await?))
}

async fn write_organization(
    state: &AnalyticsState,
    OrganizationPath {
        company,
        organization,
    }: OrganizationPath,
    body: &[u8],
    mode: Mode,
) -> Answer {
    organization.check()?;
    let body: OrganizationBody = json_object_body(body)?;
    let zone = parse_timezone(&body.timezone)?;
    changes::write_organization(state, &company, &organization, zone.name(), mode).await?;
    Ok(HttpResponse::Ok().json(records::organization(state, &company, &organization).await?))
}

/// Create an organization
#[utoipa::path(post, path = "/config/{company}/{organization}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = OrganizationBody,
    params(("company" = String, Path), ("organization" = String, Path)),
    responses((status = 200, body = OrganizationRecord), (status = 409, description = "It exists")))]
pub async fn create_organization(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<OrganizationPath>,
    body: Body,
) -> Answer {
    write_organization(&state, path.into_inner(), &body, Mode::Create).await
}

/// Create or replace an organization
#[utoipa::path(put, path = "/config/{company}/{organization}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = OrganizationBody,
    params(("company" = String, Path), ("organization" = String, Path)),
    responses((status = 200, body = OrganizationRecord), (status = 409, description = "It is being deleted")))]
pub async fn replace_organization(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<OrganizationPath>,
    body: Body,
) -> Answer {
    write_organization(&state, path.into_inner(), &body, Mode::Replace).await
}

/// Delete an organization with everything in it
#[utoipa::path(delete, path = "/config/{company}/{organization}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path), ("organization" = String, Path)),
    responses((status = 200, description = "The deletion has started", body = DeletionStarted),
        (status = 404, description = "Folder not found: <organization>")))]
pub async fn delete_organization(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<OrganizationPath>,
) -> Answer {
    let OrganizationPath {
        company,
        organization,
    } = path.into_inner();
    changes::delete(&state, &organization_scope(&company, &organization)).await?;
    Ok(deletion_started())
}

// --- folders -----------------------------------------------------------------------------------------

/// Read a folder
#[utoipa::path(get, path = "/config/{company}/{organization}/{folder}", tag = "config",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path)),
    responses((status = 200, body = FolderRecord), (status = 404, description = "Folder not found: <folder>")))]
pub async fn get_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<FolderPath>,
) -> Answer {
    let FolderPath {
        company,
        organization,
        folder,
    } = path.into_inner();
    Ok(HttpResponse::Ok().json(records::folder(&state, &company, &organization, &folder).await?))
}

async fn write_folder(
    state: &AnalyticsState,
    FolderPath {
        company,
        organization,
        folder,
    }: FolderPath,
    body: &[u8],
    mode: Mode,
) -> Answer {
    folder.check()?;
    let settings: FolderSettings = json_object_body(body)?;
    settings.check()?;
    changes::write_folder(state, &company, &organization, &folder, settings, mode).await?;
    Ok(HttpResponse::Ok().json(records::folder(state, &company, &organization, &folder).await?))
}

/// Create a folder
#[utoipa::path(post, path = "/config/{company}/{organization}/{folder}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = FolderSettings,
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path)),
    responses((status = 200, body = FolderRecord), (status = 409, description = "It exists")))]
pub async fn create_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<FolderPath>,
    body: Body,
) -> Answer {
    write_folder(&state, path.into_inner(), &body, Mode::Create).await
}

/// Create or replace a folder
#[utoipa::path(put, path = "/config/{company}/{organization}/{folder}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = FolderSettings,
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path)),
    responses((status = 200, body = FolderRecord), (status = 409, description = "It is being deleted")))]
pub async fn replace_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<FolderPath>,
    body: Body,
) -> Answer {
    write_folder(&state, path.into_inner(), &body, Mode::Replace).await
}

/// Delete a folder with its calls
#[utoipa::path(delete, path = "/config/{company}/{organization}/{folder}", tag = "config",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path)),
    responses((status = 200, description = "The deletion has started", body = DeletionStarted),
        (status = 404, description = "Folder not found: <folder>")))]
pub async fn delete_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<FolderPath>,
) -> Answer {
    let FolderPath {
        company,
        organization,
        folder,
    } = path.into_inner();
    changes::delete(&state, &folder_scope(&company, &organization, &folder)).await?;
    Ok(deletion_started())
}
