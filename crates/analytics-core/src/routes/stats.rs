//! `GET /stats/<company>/<organization>[/<folder>]?daterange=`: per day with calls, the figures of the
//! calls of a folder or of every folder of an organization (docs/figures.md, `/stats`), read from the
//! daily rollups. Without `daterange`, the current date in the organization's time zone. Any other query
//! parameter but `token`, or one given twice, is refused (400), as `/appstats` does.

use std::collections::BTreeMap;

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use chrono::Utc;
use serde_json::{json, Value};

use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::routes::paths::{FolderPath, OrganizationPath};
use crate::state::AnalyticsState;
use analytics_store as store;
use analytics_store::stats::{agent_rows, StatsScope};
use analytics_store::AgentDayRow;
use scoring::figures::format::{decimal4, hms, ratio, round4};
use scoring::figures::DateRange;
use scoring::model::parse_timezone;
use scoring::names::{CompanyName, FolderName, OrgName};

/// The range a request names (None: it selects nothing), checking the scope exists.
pub(crate) async fn request_range(
    state: &AnalyticsState,
    req: &HttpRequest,
    company: &str,
    organization: &str,
    folder: Option<&str>,
    default: &str,
) -> Result<Option<DateRange>, AnalyticsError> {
    let org = store::get_organization(&state.db, company, organization)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(folder.unwrap_or(organization)))?;
    if let Some(folder) = folder {
        store::get_folder(&state.db, company, organization, folder)
            .await?
            .ok_or_else(|| AnalyticsError::scope_not_found(folder))?;
    }
    let today = Utc::now()
        .with_timezone(&parse_timezone(&org.timezone)?)
        .date_naive();
    let text = url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(name, _)| name == "daterange")
        .map(|(_, value)| value.into_owned());
    Ok(match text {
        Some(text) => DateRange::parse(&text, today),
        None if default.is_empty() => Some(DateRange::day(today)),
        None => DateRange::parse(default, today),
    })
}

/// Refuses a query parameter that is not one of `allowed`, or that is given twice (400).
pub(crate) fn check_query(req: &HttpRequest, allowed: &[&str]) -> Result<(), AnalyticsError> {
    let mut seen = Vec::new();
    for (name, _) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
        if seen.contains(&name) {
            return Err(AnalyticsError::BadRequest(format!("{name} is given twice")));
        }
        if !allowed.contains(&name.as_ref()) {
            return Err(AnalyticsError::BadRequest(format!(
                "unknown query parameter {name}: expected {}",
                allowed.join(", ")
            )));
        }
        seen.push(name);
    }
    Ok(())
}

fn day_label(day: &str) -> String {
    day.replace('-', "")
}

/// The `/stats` object of one day from its agents' sums.
fn day_object(day: &str, agents: &[&AgentDayRow]) -> Value {
    let mut total = AgentDayRow::default();
    for a in agents {
        total.calls += a.calls;
        total.duration += a.duration;
        total.silence += a.silence;
        total.words += a.words;
        total.agent_talk += a.agent_talk;
        total.client_talk += a.client_talk;
        total.agent_positive += a.agent_positive;
        total.agent_negative += a.agent_negative;
        total.agent_improving += a.agent_improving;
        total.agent_worsening += a.agent_worsening;
        total.client_positive += a.client_positive;
        total.client_negative += a.client_negative;
        total.client_improving += a.client_improving;
        total.client_worsening += a.client_worsening;
    }
    let calls = total.calls as f64;
    let mean_talk = |a: &AgentDayRow| ratio(a.agent_talk, a.calls as f64);
    // Ties go to the smaller id: the rows come in id order and only a strictly better one replaces.
    let mut min: Option<&AgentDayRow> = None;
    let mut max: Option<&AgentDayRow> = None;
    for a in agents {
        if min.is_none_or(|m| mean_talk(a) < mean_talk(m)) {
            min = Some(a);
        }
        if max.is_none_or(|m| mean_talk(a) > mean_talk(m)) {
            max = Some(a);
        }
    }
    let who = |a: Option<&AgentDayRow>| {
        a.map(|a| json!({"id": a.agent_id, "duration": hms(mean_talk(a))}))
    };
    json!({
        "date": day_label(day),
        "calls": total.calls,
        "avgduration": hms(ratio(total.duration, calls)),
        "avgsilence": hms(ratio(total.silence, calls)),
        "avgwords": round4(ratio(total.words as f64, calls)),
        "agent": {
            "avgcalls": decimal4(ratio(calls, agents.len() as f64)),
            "talk": {"avg": hms(ratio(total.agent_talk, calls)), "min": who(min), "max": who(max)},
            "emotion": {"positive": total.agent_positive, "worsening": total.agent_worsening,
                        "negative": total.agent_negative, "improving": total.agent_improving},
        },
        "client": {
            "talk": {"avg": hms(ratio(total.client_talk, calls))},
            "emotion": {"positive": total.client_positive, "worsening": total.client_worsening,
                        "negative": total.client_negative, "improving": total.client_improving},
        },
    })
}

async fn run(
    state: &AnalyticsState,
    req: &HttpRequest,
    company: CompanyName,
    organization: OrgName,
    folder: Option<FolderName>,
) -> Result<HttpResponse, AnalyticsError> {
    let range = request_range(state, req, &company, &organization, folder.as_deref(), "").await?;
    check_query(req, &["token", "daterange"])?;
    let Some(range) = range else {
        return Ok(HttpResponse::Ok().json(Vec::<Value>::new()));
    };
    let scope = StatsScope {
        company: &company,
        organization: &organization,
        folder: folder.as_deref(),
    };
    let rows = agent_rows(&state.db, scope, &range.plan()).await?;
    let mut days: BTreeMap<&str, Vec<&AgentDayRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.calls > 0) {
        days.entry(&row.day).or_default().push(row);
    }
    let out: Vec<Value> = days
        .iter()
        .map(|(day, agents)| day_object(day, agents))
        .collect();
    Ok(HttpResponse::Ok().json(out))
}

/// Statistics of an organization's calls per day
#[utoipa::path(get, path = "/stats/{company}/{organization}", tag = "stats",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path),
        ("daterange" = Option<String>, Query, description = "$start-$end, each YYYYMMDD[HHmmss]")),
    responses((status = 200, description = "One object per date with calls")))]
pub async fn stats(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    req: HttpRequest,
    path: Path<OrganizationPath>,
) -> Result<HttpResponse, AnalyticsError> {
    let OrganizationPath {
        company,
        organization,
    } = path.into_inner();
    run(&state, &req, company, organization, None).await
}

/// Statistics of a folder's calls per day
#[utoipa::path(get, path = "/stats/{company}/{organization}/{folder}", tag = "stats",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path),
        ("daterange" = Option<String>, Query, description = "$start-$end, each YYYYMMDD[HHmmss]")),
    responses((status = 200, description = "One object per date with calls")))]
pub async fn stats_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    req: HttpRequest,
    path: Path<FolderPath>,
) -> Result<HttpResponse, AnalyticsError> {
    let FolderPath {
        company,
        organization,
        folder,
    } = path.into_inner();
    run(&state, &req, company, organization, Some(folder)).await
}
