//! `GET /appmatches/<company>/<organization>/<tId>`: where the applications of a call's folder matched
//! (docs/analytics-api.md, Application matches). The matches are not stored: the call's transcript is
//! scanned again with each application's compiled matcher (cached per revision), so the answer always
//! reflects the applications as they are now. The scan, and the compile of a revision not yet cached,
//! run on the matching pool (`apps::pool`), a fair share per company, never on the HTTP worker.

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::body::{json_body, Body};
use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::jobs::score::app_rows;
use crate::routes::paths::CallPath;
use crate::state::AnalyticsState;
use analytics_store as store;
use scoring::apps::{scorecard, CompiledApp, Selection};
use scoring::model::utterances::{turns, StoredCall};
use scoring::model::FolderSettings;

type Answer = Result<HttpResponse, AnalyticsError>;

/// The application match output of one call.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppMatches {
    pub filename: String,
    #[serde(rename = "tId")]
    pub t_id: String,
    pub organization: String,
    /// Per application, its categories by name: `{"score", "match_data": [{"phrase", "matches": [[start,
    /// end, speaker, text]]}]}` for a leaf, `{"score", "subcategories": {...}}` for a parent. Absent when
    /// no phrase of any application matched the call (a call whose matches scored 0 has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub scorecard: Option<Map<String, Value>>,
}

/// The documented shape of the optional body: category paths (levels joined by `.`) per application.
pub struct AppSelection;

impl utoipa::PartialSchema for AppSelection {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Type};
        let paths = ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String));
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(AdditionalProperties::RefOr(paths.into())))
            .examples([serde_json::json!({"billing": ["Sales.Upsell"]})])
            .into()
    }
}

impl ToSchema for AppSelection {}

/// Where a call's applications matched
///
/// An optional JSON body `{APP: [CATEGORY PATH, ...]}` limits the phrase matches to the named categories
/// and everything below them (a path joins levels with '.'); other categories of a named application
/// keep their scores, applications not named are left out. An application or path the call's folder does
/// not have is a 404.
#[utoipa::path(get, path = "/appmatches/{company}/{organization}/{tId}", tag = "apps",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("tId" = String, Path)),
    request_body(content = Option<AppSelection>, description = "Optional: category paths per application"),
    responses((status = 200, body = AppMatches),
        (status = 404, description = "Transcript not found: <tId>, or an application or category the \
            body names that the call's folder does not have (text/html)")))]
pub async fn app_matches(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<CallPath>,
    body: Body,
) -> Answer {
    let CallPath {
        company,
        organization,
        call,
    } = path.into_inner();
    let request: Option<BTreeMap<String, Vec<String>>> = json_body(&body, Some(None))?;

    let row = store::get_call(&state.db, &call)
        .await?
        .filter(|r| r.company == *company && r.organization == *organization)
        .ok_or_else(|| AnalyticsError::call_not_found(&call))?;
    let folder = store::get_folder(&state.db, &company, &organization, &row.folder)
        .await?
        .ok_or_else(|| AnalyticsError::call_not_found(&call))?;
    let settings: FolderSettings =
        serde_json::from_str(&folder.settings).map_err(AnalyticsError::internal)?;

    // The folder's applications that exist, each once.
    let mut apps: Vec<Arc<CompiledApp>> = Vec::new();
    for row in app_rows(&state, None, &company, &settings.apps).await? {
        apps.push(state.apps.compiled(&state.matching, &row).await?);
    }
    let selected = select(apps, request)?;

    let key = row.transcript_key();
    let bytes = state
        .objects
        .get(&key)
        .await?
        .ok_or_else(|| AnalyticsError::transcript_missing(&call))?;
    // Reading the transcript and matching it are CPU work: on the matching pool, never on this worker.
    let seconds = row.audio_seconds;
    let (card, matched) = state
        .matching
        .run(&company, move || -> Result<_, AnalyticsError> {
            let turns = turns(
                StoredCall::read(&bytes)
                    .map_err(AnalyticsError::internal)?
                    .utterances,
            );
            let mut card = Map::new();
            let mut matched = false;
            for (app, selection) in &selected {
                let card_of_app = match app.evaluate(&turns, seconds) {
                    Ok(evaluation) => {
                        matched |= evaluation.matched();
                        scorecard(app, &evaluation, &turns, selection)
                    }
                    Err(over) => {
                        matched = true;
                        serde_json::json!({ "failed": over.to_string() })
                    }
                };
                card.insert(app.app.clone(), card_of_app);
            }
            Ok((card, matched))
        })
        .await??;
    Ok(HttpResponse::Ok().json(AppMatches {
        filename: row.filename,
        t_id: row.id,
        organization: row.organization,
        scorecard: matched.then_some(card),
    }))
}

/// The applications of the answer with what each gives match data for. Without a request (or with an
/// empty one), every application with every leaf; otherwise the named applications, by name, each with
/// its paths, which must be categories of it.
fn select(
    apps: Vec<Arc<CompiledApp>>,
    request: Option<BTreeMap<String, Vec<String>>>,
) -> Result<Vec<(Arc<CompiledApp>, Selection)>, AnalyticsError> {
    let Some(request) = request.filter(|r| !r.is_empty()) else {
        return Ok(apps.into_iter().map(|a| (a, Selection::All)).collect());
    };
    for (name, paths) in &request {
        let app = apps.iter().find(|a| &a.app == name).ok_or_else(|| {
            AnalyticsError::NotFound(format!(
                "Application not found: {name} (the call's folder has no such application)"
            ))
        })?;
        if let Some(path) = paths.iter().find(|p| p.is_empty() || app.find(p).is_none()) {
            return Err(AnalyticsError::category_not_found(path, name));
        }
    }
    Ok(apps
        .into_iter()
        .filter_map(|app| {
            let paths = request.get(&app.app)?.clone();
            Some((app, Selection::Paths(paths)))
        })
        .collect())
}
