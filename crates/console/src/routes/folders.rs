//! `GET /console/<company>/`: the company's organizations and folders, from `/config`.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use serde::Deserialize;

use super::session::Session;
use crate::api::segment;
use crate::error::ConsoleError;
use crate::pages::folders::{self, Organization};
use crate::pages::layout;

/// The most organizations the page lists.
const MAX_ORGANIZATIONS: usize = 200;

#[derive(Deserialize)]
struct CompanyRecord {
    organizations: Vec<String>,
}

#[derive(Deserialize)]
struct OrganizationRecord {
    organization: String,
    timezone: String,
    folders: Vec<String>,
}

pub async fn folders(session: Session) -> Result<HttpResponse, ConsoleError> {
    let api = session.api();
    let company = segment(&session.row.company);
    let record: CompanyRecord = api.get(&format!("/config/{company}")).await?;
    let mut organizations = Vec::new();
    for name in record.organizations.iter().take(MAX_ORGANIZATIONS) {
        let organization: OrganizationRecord = api
            .get(&format!("/config/{company}/{}", segment(name)))
            .await?;
        organizations.push(Organization {
            name: organization.organization,
            timezone: organization.timezone,
            folders: organization.folders,
        });
    }
    Ok(layout::page(
        StatusCode::OK,
        "Folders",
        Some(&session.signed()),
        folders::content(&session.row.company, &organizations),
    ))
}
