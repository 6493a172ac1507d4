//! `GET /apps/<company>/<app>/rescoring`: how far the calls of the folders using an application are
//! scored with the applications as they are now (docs/analytics-api.md, Rescoring progress), so an
//! editor can follow the rescoring a change started. A folder's call counts as scored when the
//! fingerprint of its scores (each application of its folder with its revision, docs/scoring.md) is
//! the folder's current one.

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use serde::Serialize;
use utoipa::ToSchema;

use super::apps::app_not_found;
use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::jobs::score::{app_rows, fingerprint};
use crate::routes::paths::AppPath;
use crate::state::AnalyticsState;
use analytics_store::{self as store, STATUS_OK};
use scoring::model::FolderSettings;

/// One folder's progress.
#[derive(Debug, Serialize, ToSchema)]
pub struct FolderProgress {
    pub organization: String,
    pub folder: String,
    /// The folder's calls.
    pub calls: i64,
    /// Those scored with its applications as they are now.
    pub scored: i64,
}

/// The rescoring of an application's folders.
#[derive(Debug, Serialize, ToSchema)]
pub struct RescoringProgress {
    pub app: String,
    /// The application's revision now.
    pub revision: String,
    /// The calls of every folder using it, and those scored with its applications as they are now:
    /// the rescoring is over when the two are equal.
    pub calls: i64,
    pub scored: i64,
    pub folders: Vec<FolderProgress>,
}

/// Follow an application's rescoring
#[utoipa::path(get, path = "/apps/{company}/{app}/rescoring", tag = "apps",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("app" = String, Path, description = "Application name, URL-encoded")),
    responses((status = 200, body = RescoringProgress),
        (status = 404, description = "Application not found: <app> (text/html)")))]
pub async fn rescoring(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<AppPath>,
) -> Result<HttpResponse, AnalyticsError> {
    let AppPath { company, app } = path.into_inner();
    let row = store::get_app(&state.db, &company, &app)
        .await?
        .ok_or_else(|| app_not_found(&app))?;
    let mut folders = Vec::new();
    for folder in store::company_folders(&state.db, &company).await? {
        if folder.status != STATUS_OK {
            continue;
        }
        let settings: FolderSettings =
            serde_json::from_str(&folder.settings).map_err(AnalyticsError::internal)?;
        if !settings.apps.iter().any(|name| *name == *app) {
            continue;
        }
        let current = fingerprint(&app_rows(&state, None, &company, &settings.apps).await?);
        let progress = store::scoring_progress(
            &state.db,
            &company,
            &folder.organization,
            &folder.folder,
            &current,
        )
        .await?;
        folders.push(FolderProgress {
            organization: folder.organization,
            folder: folder.folder,
            calls: progress.calls,
            scored: progress.scored,
        });
    }
    Ok(HttpResponse::Ok().json(RescoringProgress {
        app: row.name,
        revision: row.revision,
        calls: folders.iter().map(|f| f.calls).sum(),
        scored: folders.iter().map(|f| f.scored).sum(),
        folders,
    }))
}
