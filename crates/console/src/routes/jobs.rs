//! `GET /console/<company>/jobs`: the company's transcriptions and deletions, from `/jobs`.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;

use super::session::Session;
use crate::api::segment;
use crate::error::ConsoleError;
use crate::pages::jobs::{self, Jobs};
use crate::pages::layout;

pub async fn jobs(session: Session) -> Result<HttpResponse, ConsoleError> {
    let listed: Jobs = session
        .api()
        .get(&format!("/jobs/{}", segment(&session.row.company)))
        .await?;
    Ok(layout::page(
        StatusCode::OK,
        "Jobs",
        Some(&session.signed()),
        jobs::content(&session.row.company, &listed),
    ))
}
