//! Reading a company, an organization or a folder as the API shows it: its row, what it holds, and
//! while it is being deleted how far the deletion has gone (`deleting (NN%)`, from how many of the calls
//! it held are left).

use analytics_store::{self as store, FolderRow, STATUS_DELETING};
use common::search::Scope;
use scoring::model::{CompanyRecord, FolderRecord, FolderSettings, OrganizationRecord};
use scoring::names::{CompanyName, FolderName, OrgName};

use super::{company_scope, folder_scope, organization_scope};
use crate::error::AnalyticsError;
use crate::state::AnalyticsState;

/// The company's record; 404 when there is none.
pub async fn company(
    state: &AnalyticsState,
    company: &CompanyName,
) -> Result<CompanyRecord, AnalyticsError> {
    let row = store::get_company(&state.db, company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(company))?;
    let scope = company_scope(company);
    Ok(CompanyRecord {
        status: status_of(state, &row.status, row.delete_total, &scope).await?,
        organizations: store::organizations(&state.db, company).await?,
        company: row.company,
        name: row.name,
        created: row.created,
    })
}

/// The organization's record; 404 when there is none.
pub async fn organization(
    state: &AnalyticsState,
    company: &CompanyName,
    organization: &OrgName,
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

/// The folder's record; 404 when there is none.
pub async fn folder(
    state: &AnalyticsState,
    company: &CompanyName,
    organization: &OrgName,
    folder: &FolderName,
) -> Result<FolderRecord, AnalyticsError> {
    let row = store::get_folder(&state.db, company, organization, folder)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(folder))?;
    folder_record(&row)
}

/// The folder's record from its row.
fn folder_record(row: &FolderRow) -> Result<FolderRecord, AnalyticsError> {
    let settings: FolderSettings =
        serde_json::from_str(&row.settings).map_err(AnalyticsError::internal)?;
    Ok(FolderRecord::new(
        settings,
        row.created.clone(),
        row.status.clone(),
    ))
}

/// A company, organization or folder being deleted, and how far that is.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Deletion {
    /// Absent for the company itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// Absent for the company or an organization.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// `deleting (NN%)`.
    pub status: String,
}

/// What of the company is being deleted: itself, its organizations, its folders.
pub async fn deletions(
    state: &AnalyticsState,
    company: &CompanyName,
) -> Result<Vec<Deletion>, AnalyticsError> {
    let mut found = Vec::new();
    let Some(row) = store::get_company(&state.db, company).await? else {
        return Ok(found);
    };
    if row.status == STATUS_DELETING {
        found.push(Deletion {
            organization: None,
            folder: None,
            status: status_of(
                state,
                &row.status,
                row.delete_total,
                &company_scope(company),
            )
            .await?,
        });
    }
    for name in store::organizations(&state.db, company).await? {
        let Some(row) = store::get_organization(&state.db, company, &name).await? else {
            continue;
        };
        if row.status == STATUS_DELETING {
            let scope = organization_scope(company, &name);
            found.push(Deletion {
                status: status_of(state, &row.status, row.delete_total, &scope).await?,
                organization: Some(name),
                folder: None,
            });
        }
    }
    for row in store::company_folders(&state.db, company).await? {
        if row.status == STATUS_DELETING {
            let scope = folder_scope(company, &row.organization, &row.folder);
            found.push(Deletion {
                status: status_of(state, &row.status, row.delete_total, &scope).await?,
                organization: Some(row.organization),
                folder: Some(row.folder),
            });
        }
    }
    Ok(found)
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
