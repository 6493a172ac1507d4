//! `/config/<company>[/<organization>[/<folder>]]`: companies, organizations (with their time zone) and
//! folders (docs/analytics-api.md, Configuration). `POST` creates (409 when it exists), `PUT` creates or
//! replaces, `GET` reads with the deletion `status`, `DELETE` starts a deletion job on the bus and answers
//! at once; the job removes every row, stored object and search document, then the object reads as
//! `Folder not found: <name>`. Nothing can be added to what is being deleted.

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use chrono::Utc;
use common::db::Tx;
use common::search::Scope;
use messages::v1::DeleteScope;

use super::body::{json_object_body, Body};
use crate::access::{Authorized, Read, Write};
use crate::error::AnalyticsError;
use crate::routes::paths::{FolderPath, OrganizationPath};
use crate::state::AnalyticsState;
use analytics_store::{
    self as store, CompanyRow, FolderRow, OrganizationRow, STATUS_DELETING, STATUS_OK,
};
use scoring::model::{
    parse_timezone, CompanyBody, CompanyRecord, FolderRecord, FolderSettings, OrganizationBody,
    OrganizationRecord,
};
use scoring::names::CompanyName;

type Answer = Result<HttpResponse, AnalyticsError>;

fn today() -> String {
    Utc::now().format("%Y-%m-%d").to_string()
}

/// `deleting (NN%)` from how many calls of the scope are left of those it held.
async fn status_of(
    state: &AnalyticsState,
    status: &str,
    total: i64,
    scope: &Scope,
) -> Result<String, AnalyticsError> {
    if status != STATUS_DELETING || total == 0 {
        return Ok(status.to_string());
    }
    let left = store::count_calls(&state.db, scope).await?;
    let done = ((total - left).max(0) * 100 / total).min(99);
    Ok(format!("{STATUS_DELETING} ({done}%)"))
}

fn company_scope(company: &str) -> Scope {
    Scope {
        company: company.into(),
        organization: None,
        folder: None,
    }
}

fn organization_scope(company: &str, organization: &str) -> Scope {
    Scope {
        organization: Some(organization.into()),
        ..company_scope(company)
    }
}

fn folder_scope(company: &str, organization: &str, folder: &str) -> Scope {
    Scope {
        folder: Some(folder.into()),
        ..organization_scope(company, organization)
    }
}

/// Refuses a change below something being deleted.
fn usable(status: &str, what: &str) -> Result<(), AnalyticsError> {
    if status == STATUS_OK {
        Ok(())
    } else {
        Err(AnalyticsError::Conflict(format!(
            "{what} is being deleted; nothing can be added to it or changed in it"
        )))
    }
}

/// Starts the deletion of `scope` inside `tx`: marks it, counts its calls and publishes the job.
async fn start_deletion(
    state: &AnalyticsState,
    tx: &mut Tx,
    scope: &Scope,
) -> Result<(), AnalyticsError> {
    let total = store::count_calls(&mut *tx, scope).await?;
    store::mark_deleting(&mut *tx, scope, total).await?;
    let job = DeleteScope {
        job_id: uuid::Uuid::new_v4().to_string(),
        company: scope.company.clone(),
        organization: scope.organization.clone().unwrap_or_default(),
        folder: scope.folder.clone().unwrap_or_default(),
    };
    let message = crate::outbox::message(messages::topics::DELETE, &job.company, &job);
    state
        .bus
        .publish(tx, &message)
        .await
        .map_err(AnalyticsError::internal)?;
    Ok(())
}

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

async fn company_record(
    state: &AnalyticsState,
    company: &str,
) -> Result<CompanyRecord, AnalyticsError> {
    let row = store::get_company(&state.db, company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(company))?;
    Ok(CompanyRecord {
        status: status_of(
            state,
            &row.status,
            row.delete_total,
            &company_scope(company),
        )
        .await?,
        organizations: store::organizations(&state.db, company).await?,
        company: row.company,
        name: row.name,
        created: row.created,
    })
}

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
    Ok(HttpResponse::Ok().json(company_record(&state, &company).await?))
}

async fn write_company(
    state: &AnalyticsState,
    company: &CompanyName,
    body: &[u8],
    replace: bool,
) -> Answer {
    company.check()?;
    let body: CompanyBody = json_object_body(body)?;
    let name = body.name.unwrap_or_else(|| company.to_string());
    scoring::names::check_value("name", &name)?;
    let mut tx = state.db.begin().await?;
    match store::get_company(&mut tx, company).await? {
        Some(existing) if replace => {
            usable(&existing.status, &format!("company {company}"))?;
            store::rename_company(&mut tx, company, &name).await?;
        }
        Some(_) => {
            return Err(AnalyticsError::Conflict(format!(
                "company {company} already exists"
            )))
        }
        None => {
            let row = CompanyRow {
                company: company.to_string(),
                name,
                created: today(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_company(&mut tx, &row).await?;
        }
    }
    tx.commit().await?;
    Ok(HttpResponse::Ok().json(company_record(state, company).await?))
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
    write_company(&state, &path.into_inner(), &body, false).await
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
    write_company(&state, &path.into_inner(), &body, true).await
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
    let company = path.into_inner();
    let mut tx = state.db.begin().await?;
    let row = store::get_company(&mut tx, &company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&company))?;
    if row.status == STATUS_OK {
        start_deletion(&state, &mut tx, &company_scope(&company)).await?;
    }
    tx.commit().await?;
    Ok(deletion_started())
}

// --- organizations -----------------------------------------------------------------------------------

async fn organization_record(
    state: &AnalyticsState,
    company: &str,
    organization: &str,
) -> Result<OrganizationRecord, AnalyticsError> {
    let row = store::get_organization(&state.db, company, organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(organization))?;
    let scope = organization_scope(company, organization);
    Ok(OrganizationRecord {
        status: status_of(state, &row.status, row.delete_total, &scope).await?,
        folders: store::folders(&state.db, company, organization).await?,
        organization: row.organization,
        timezone: row.timezone,
        created: row.created,
    })
}

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
    Ok(HttpResponse::Ok().json(organization_record(&state, &company, &organization).await?))
}

async fn write_organization(
    state: &AnalyticsState,
    OrganizationPath {
        company,
        organization,
    }: OrganizationPath,
    body: &[u8],
    replace: bool,
) -> Answer {
    organization.check()?;
    let body: OrganizationBody = json_object_body(body)?;
    let zone = parse_timezone(&body.timezone)?;
    let mut tx = state.db.begin().await?;
    let parent = store::get_company(&mut tx, &company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&company))?;
    usable(&parent.status, &format!("company {company}"))?;
    match store::get_organization(&mut tx, &company, &organization).await? {
        Some(existing) if replace => {
            usable(&existing.status, &format!("organization {organization}"))?;
            store::set_timezone(&mut tx, &company, &organization, zone.name()).await?;
        }
        Some(_) => {
            return Err(AnalyticsError::Conflict(format!(
                "organization {organization} already exists"
            )))
        }
        None => {
            let row = OrganizationRow {
                company: company.to_string(),
                organization: organization.to_string(),
                timezone: zone.name().to_string(),
                created: today(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_organization(&mut tx, &row).await?;
        }
    }
    tx.commit().await?;
    Ok(HttpResponse::Ok().json(organization_record(state, &company, &organization).await?))
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
    write_organization(&state, path.into_inner(), &body, false).await
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
    write_organization(&state, path.into_inner(), &body, true).await
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
    let mut tx = state.db.begin().await?;
    let row = store::get_organization(&mut tx, &company, &organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&organization))?;
    if row.status == STATUS_OK {
        start_deletion(
            &state,
            &mut tx,
            &organization_scope(&company, &organization),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(deletion_started())
}

// --- folders -----------------------------------------------------------------------------------------

/// The folder's record from its row.
pub fn folder_record(row: &FolderRow) -> Result<FolderRecord, AnalyticsError> {
    let settings: FolderSettings =
        serde_json::from_str(&row.settings).map_err(AnalyticsError::internal)?;
    Ok(FolderRecord::new(
        settings,
        row.created.clone(),
        row.status.clone(),
    ))
}

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
    let row = store::get_folder(&state.db, &company, &organization, &folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&folder))?;
    Ok(HttpResponse::Ok().json(folder_record(&row)?))
}

async fn write_folder(
    state: &AnalyticsState,
    FolderPath {
        company,
        organization,
        folder,
    }: FolderPath,
    body: &[u8],
    replace: bool,
) -> Answer {
    folder.check()?;
    let mut settings: FolderSettings = json_object_body(body)?;
    settings.check()?;
    // The address guard of callbacks given with an upload (docs/transcription.md, Callbacks), here
    // rather than at every upload to the folder.
    if let Some(url) = &settings.callback.url {
        state
            .callbacks
            .policy
            .check_configured_url(url)
            .await
            .map_err(|refused| AnalyticsError::BadRequest(format!("callback.url: {refused}")))?;
    }
    settings.created = None;
    settings.status = None;
    let text = serde_json::to_string(&settings).map_err(AnalyticsError::internal)?;
    let mut tx = state.db.begin().await?;
    let parent = store::get_organization(&mut tx, &company, &organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&organization))?;
    usable(&parent.status, &format!("organization {organization}"))?;
    match store::get_folder(&mut tx, &company, &organization, &folder).await? {
        Some(existing) if replace => {
            usable(&existing.status, &format!("folder {folder}"))?;
            let before = existing.usable_settings()?;
            store::set_folder_settings(&mut tx, &company, &organization, &folder, &text).await?;
            // The values of fields no longer configured leave the database and, through a reindex of
            // the calls that had them, the search index, with the change: the folder's owner stopped
            // keeping them, and they may be personal data.
            let dropped: Vec<String> = before
                .custom_meta
                .iter()
                .filter(|field| !settings.custom_meta.contains(field))
                .cloned()
                .collect();
            let had =
                store::remove_folder_fields(&mut tx, &company, &organization, &folder, &dropped)
                    .await?;
            crate::outbox::reindex_calls(state, &mut tx, (&company, &organization, &folder), &had)
                .await?;
            // Its calls are scored by other applications now: a rescore job, committed with the change.
            if before.apps != settings.apps {
                crate::outbox::rescore_folder(state, &mut tx, &company, &organization, &folder)
                    .await?;
            }
        }
        Some(_) => {
            return Err(AnalyticsError::Conflict(format!(
                "folder {folder} already exists"
            )))
        }
        None => {
            let row = FolderRow {
                company: company.to_string(),
                organization: organization.to_string(),
                folder: folder.to_string(),
                settings: text,
                created: today(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_folder(&mut tx, &row).await?;
        }
    }
    tx.commit().await?;
    let row = store::get_folder(&state.db, &company, &organization, &folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&folder))?;
    Ok(HttpResponse::Ok().json(folder_record(&row)?))
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
    write_folder(&state, path.into_inner(), &body, false).await
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
    write_folder(&state, path.into_inner(), &body, true).await
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
    let mut tx = state.db.begin().await?;
    let row = store::get_folder(&mut tx, &company, &organization, &folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&folder))?;
    if row.status == STATUS_OK {
        start_deletion(
            &state,
            &mut tx,
            &folder_scope(&company, &organization, &folder),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(deletion_started())
}
