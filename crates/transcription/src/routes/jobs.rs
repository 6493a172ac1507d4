//! `GET /jobs/<company>`: the company's work under way or recently done, for an operator's page
//! (docs/analytics-api.md, Jobs): its latest transcription requests with their progress, and what of it
//! is being deleted with how far that is.

use actix_web::web::{Data, Path, Query};
use actix_web::HttpResponse;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::progress::Progress;
use crate::state::TranscriptionState;
use analytics_core::access::{Authorized, Read};
use analytics_core::error::AnalyticsError;
use analytics_core::scopes::records::{self, Deletion};
use analytics_store::requests;
use scoring::names::CompanyName;

/// The most requests one answer lists.
const MAX_LIMIT: i64 = 200;

#[derive(Debug, Deserialize)]
pub struct JobsQuery {
    limit: Option<i64>,
}

/// A company's jobs.
#[derive(Debug, Serialize, ToSchema)]
pub struct Jobs {
    /// The latest transcription requests, newest first, as `GET /transcribe/{requestid}` shows each.
    pub transcriptions: Vec<Progress>,
    /// The company, organizations and folders being deleted.
    pub deletions: Vec<Deletion>,
}

/// A company's transcriptions and deletions
#[utoipa::path(get, path = "/jobs/{company}", tag = "transcription",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 200,
            description = "Requests listed, 1 to 200 (default 50)")),
    responses((status = 200, body = Jobs),
        (status = 400, description = "A limit out of range (text/html)")))]
pub async fn jobs(
    state: Data<TranscriptionState>,
    _: Authorized<Read>,
    path: Path<CompanyName>,
    query: Query<JobsQuery>,
) -> Result<HttpResponse, AnalyticsError> {
    let company = path.into_inner();
    let limit = query.limit.unwrap_or(50);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(AnalyticsError::BadRequest(format!(
            "limit: from 1 to {MAX_LIMIT}"
        )));
    }
    let rows = requests::recent_requests(&state.db, &company, limit).await?;
    Ok(HttpResponse::Ok().json(Jobs {
        transcriptions: rows.iter().map(Progress::from).collect(),
        deletions: records::deletions(&state, &company).await?,
    }))
}
