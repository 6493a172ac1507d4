//! `GET /console/<company>/search?organization=&folder=&q=&offset=`: calls found by `/search`, 20 a page.

use actix_web::http::StatusCode;
use actix_web::web::Query;
use actix_web::HttpResponse;
use serde::Deserialize;

use super::session::Session;
use crate::api::segment;
use crate::error::ConsoleError;
use crate::pages::layout;
use crate::pages::search::{self, Asked, Hits};

const PAGE: u64 = 20;

#[derive(Deserialize)]
pub struct SearchQuery {
    organization: Option<String>,
    #[serde(default)]
    folder: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    offset: u64,
}

#[derive(Deserialize)]
struct CompanyRecord {
    organizations: Vec<String>,
}

pub async fn search(
    session: Session,
    query: Query<SearchQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let api = session.api();
    let company = segment(&session.row.company);
    let record: CompanyRecord = api.get(&format!("/config/{company}")).await?;
    let organization = match &query.organization {
        Some(organization) => organization.clone(),
        None => record.organizations.first().cloned().unwrap_or_default(),
    };
    let folder = query.folder.trim();
    let hits = if organization.is_empty() {
        None
    } else {
        let mut path = format!("/search/{company}/{}", segment(&organization));
        if !folder.is_empty() {
            path.push('/');
            path.push_str(&segment(folder));
        }
        let params = serde_urlencoded::to_string([
            ("q", query.q.as_str()),
            ("limit", &PAGE.to_string()),
            ("offset", &query.offset.to_string()),
        ])
        .map_err(ConsoleError::internal)?;
        Some(api.get::<Hits>(&format!("{path}?{params}")).await?)
    };
    let asked = Asked {
        organization: &organization,
        folder,
        q: &query.q,
    };
    Ok(layout::page(
        StatusCode::OK,
        "Search calls",
        Some(&session.signed()),
        search::content(
            &session.row.company,
            &record.organizations,
            &asked,
            hits.as_ref(),
        ),
    ))
}
