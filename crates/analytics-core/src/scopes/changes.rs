//! Writing companies, organizations and folders, each change in one transaction: the parent is read
//! first and must not be being deleted; a folder's replacement drops the values of the fields it no
//! longer keeps and, with the change, publishes the reindex of the calls that had them and the rescore
//! of its calls when its applications changed. A deletion marks the scope, counts its calls (for its
//! progress) and publishes its job, which removes the rest off the request threads.

use analytics_store::{self as store, CompanyRow, FolderRow, OrganizationRow, STATUS_OK};
use chrono::Utc;
use common::db::Tx;
use common::search::Scope;
use messages::v1::DeleteScope;
use scoring::model::FolderSettings;
use scoring::names::{CompanyName, FolderName, OrgName};

use super::usable;
use crate::error::AnalyticsError;
use crate::outbox;
use crate::state::AnalyticsState;

/// What a write may do to a scope that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Only create: one that exists is a conflict (`POST`).
    Create,
    /// Create, or replace the one that exists (`PUT`).
    Replace,
}

fn today() -> String {
    Utc::now().format("%Y-%m-%d").to_string()
}

fn exists(what: &str) -> AnalyticsError {
    AnalyticsError::Conflict(format!("{what} already exists"))
}

/// Creates or renames company `company`.
pub async fn write_company(
    state: &AnalyticsState,
    company: &CompanyName,
    name: &str,
    mode: Mode,
) -> Result<(), AnalyticsError> {
    let what = format!("company {company}");
    let mut tx = state.db.begin().await?;
    match store::get_company(&mut tx, company).await? {
        Some(existing) if mode == Mode::Replace => {
            usable(&existing.status, &what)?;
            store::rename_company(&mut tx, company, name).await?;
        }
        Some(_) => return Err(exists(&what)),
        None => {
            let row = CompanyRow {
                company: company.to_string(),
                name: name.to_string(),
                created: today(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_company(&mut tx, &row).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Creates organization `organization` of `company`, or sets its time zone.
pub async fn write_organization(
    state: &AnalyticsState,
    company: &CompanyName,
    organization: &OrgName,
    timezone: &str,
    mode: Mode,
) -> Result<(), AnalyticsError> {
    let what = format!("organization {organization}");
    let mut tx = state.db.begin().await?;
    let parent = store::get_company(&mut tx, company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(company))?;
    usable(&parent.status, &format!("company {company}"))?;
    match store::get_organization(&mut tx, company, organization).await? {
        Some(existing) if mode == Mode::Replace => {
            usable(&existing.status, &what)?;
            store::set_timezone(&mut tx, company, organization, timezone).await?;
        }
        Some(_) => return Err(exists(&what)),
        None => {
            let row = OrganizationRow {
                company: company.to_string(),
                organization: organization.to_string(),
                timezone: timezone.to_string(),
                created: today(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_organization(&mut tx, &row).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Creates folder `folder` of an organization with `settings` (checked), or replaces its settings.
pub async fn write_folder(
    state: &AnalyticsState,
    company: &CompanyName,
    organization: &OrgName,
    folder: &FolderName,
    mut settings: FolderSettings,
    mode: Mode,
) -> Result<(), AnalyticsError> {
    // The address guard of callbacks given with an upload (docs/transcription.md, Callbacks), here
    // rather than at every upload to the folder.
    if let Some(url) = &settings.callback.url {
        state
            .callback_addresses
            .check_configured_url(url)
            .await
            .map_err(|refused| AnalyticsError::BadRequest(format!("callback.url: {refused}")))?;
    }
    settings.created = None;
    settings.status = None;
    let text = serde_json::to_string(&settings).map_err(AnalyticsError::internal)?;
    let what = format!("folder {folder}");
    let mut tx = state.db.begin().await?;
    let parent = store::get_organization(&mut tx, company, organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(organization))?;
    usable(&parent.status, &format!("organization {organization}"))?;
    match store::get_folder(&mut tx, company, organization, folder).await? {
        Some(existing) if mode == Mode::Replace => {
            usable(&existing.status, &what)?;
            let before = existing.usable_settings()?;
            store::set_folder_settings(&mut tx, company, organization, folder, &text).await?;
            // The values of fields no longer configured leave the database and, through a reindex of
            // the calls that had them, the search index, with the change: the folder's owner stopped
            // keeping them, and they may be personal data.
            let dropped: Vec<String> = before
                .custom_meta
                .iter()
                .filter(|field| !settings.custom_meta.contains(field))
                .cloned()
                .collect();
            let had = store::remove_folder_fields(&mut tx, company, organization, folder, &dropped)
                .await?;
            outbox::reindex_calls(state, &mut tx, company, organization, folder, &had).await?;
            // Its calls are scored by other applications now: a rescore job, committed with the change.
            if before.apps != settings.apps {
                outbox::rescore_folder(state, &mut tx, company, organization, folder).await?;
            }
        }
        Some(_) => return Err(exists(&what)),
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
    Ok(())
}

/// Starts the deletion of `scope`, or lets the one under way go on; 404 when it does not exist.
pub async fn delete(state: &AnalyticsState, scope: &Scope) -> Result<(), AnalyticsError> {
    let mut tx = state.db.begin().await?;
    let status = status_in(&mut tx, scope).await?;
    if status == STATUS_OK {
        let total = store::count_calls(&mut tx, scope).await?;
        store::mark_deleting(&mut tx, scope, total).await?;
        let job = DeleteScope {
            job_id: uuid::Uuid::new_v4().to_string(),
            company: scope.company.clone(),
            organization: scope.organization.clone().unwrap_or_default(),
            folder: scope.folder.clone().unwrap_or_default(),
        };
        let message = outbox::message(messages::topics::DELETE, &job.company, &job);
        state
            .bus
            .publish(&mut tx, &message)
            .await
            .map_err(AnalyticsError::internal)?;
    }
    tx.commit().await?;
    Ok(())
}

/// The status of the company, organization or folder `scope` names; 404 when there is none.
async fn status_in(tx: &mut Tx, scope: &Scope) -> Result<String, AnalyticsError> {
    let company = scope.company.as_str();
    let status = match (scope.organization.as_deref(), scope.folder.as_deref()) {
        (None, _) => store::get_company(&mut *tx, company)
            .await?
            .map(|row| row.status),
        (Some(organization), None) => store::get_organization(&mut *tx, company, organization)
            .await?
            .map(|row| row.status),
        (Some(organization), Some(folder)) => {
            store::get_folder(&mut *tx, company, organization, folder)
                .await?
                .map(|row| row.status)
        }
    };
    status.ok_or_else(|| AnalyticsError::scope_not_found(innermost(scope)))
}

/// The name of the innermost scope `scope` names.
fn innermost(scope: &Scope) -> &str {
    scope
        .folder
        .as_deref()
        .or(scope.organization.as_deref())
        .unwrap_or(&scope.company)
}
