//! What `speechd bootstrap` creates in analytics, idempotently and inside the caller's transaction: the
//! company as analytics knows it, one organization and one folder to add calls to.

use chrono::Utc;
use common::db::Tx;

use analytics_store::{self as store, CompanyRow, FolderRow, OrganizationRow, STATUS_OK};
use scoring::model::FolderSettings;

pub const DEFAULT_ORGANIZATION: &str = "main";
pub const DEFAULT_FOLDER: &str = "calls";
pub const DEFAULT_TIMEZONE: &str = "UTC";

/// Creates what is missing of `company`, its organization `main` (UTC) and its folder `calls`, and
/// answers their names. Refuses when any of them is being deleted.
pub async fn ensure_defaults(tx: &mut Tx, company: &str) -> anyhow::Result<(String, String)> {
    let today = Utc::now().format("%Y-%m-%d").to_string();
    match store::get_company(&mut *tx, company).await? {
        Some(row) => anyhow::ensure!(
            row.status == STATUS_OK,
            "company {company} is being deleted in analytics; run bootstrap again once it is gone"
        ),
        None => {
            let row = CompanyRow {
                company: company.into(),
                name: company.into(),
                created: today.clone(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_company(&mut *tx, &row).await?;
        }
    }
    match store::get_organization(&mut *tx, company, DEFAULT_ORGANIZATION).await? {
        Some(row) => anyhow::ensure!(
            row.status == STATUS_OK,
            "organization {DEFAULT_ORGANIZATION} is being deleted"
        ),
        None => {
            let row = OrganizationRow {
                company: company.into(),
                organization: DEFAULT_ORGANIZATION.into(),
                timezone: DEFAULT_TIMEZONE.into(),
                created: today.clone(),
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_organization(&mut *tx, &row).await?;
        }
    }
    match store::get_folder(&mut *tx, company, DEFAULT_ORGANIZATION, DEFAULT_FOLDER).await? {
        Some(row) => anyhow::ensure!(
            row.status == STATUS_OK,
            "folder {DEFAULT_FOLDER} is being deleted"
        ),
        None => {
            let row = FolderRow {
                company: company.into(),
                organization: DEFAULT_ORGANIZATION.into(),
                folder: DEFAULT_FOLDER.into(),
                settings: serde_json::to_string(&FolderSettings::default())?,
                created: today,
                status: STATUS_OK.into(),
                delete_total: 0,
            };
            store::insert_folder(&mut *tx, &row).await?;
        }
    }
    Ok((DEFAULT_ORGANIZATION.into(), DEFAULT_FOLDER.into()))
}
