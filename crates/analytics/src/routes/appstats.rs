//! `GET /appstats/<company>/<organization>/<app>[/<folder>]`: per day, per agent, the scores of an
//! application's categories (docs/figures.md, `/appstats`), read from the daily rollups. Options:
//! `daterange` (default: every day up to today), `category` (a period-separated path; its upper levels
//! are returned too), `depth` (levels below it: 0 by default with a category, all (-1) without),
//! `agents` (comma-separated ids) and `zeros` (also categories no call hit).

use std::collections::{BTreeMap, BTreeSet};

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use serde_json::{json, Map, Value};

use super::stats::request_range;
use crate::error::AnalyticsError;
use crate::figures::format::{decimal4, hms, ratio};
use crate::state::AnalyticsState;
use crate::store::stats::{category_rows, CategoryDayRow, StatsScope};

#[derive(Debug, Default)]
struct Options {
    category: Option<String>,
    depth: Option<i64>,
    agents: Option<BTreeSet<String>>,
    zeros: bool,
}

fn options(req: &HttpRequest) -> Result<Options, AnalyticsError> {
    let mut o = Options::default();
    let mut seen = Vec::new();
    for (name, value) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
        if seen.contains(&name) {
            return Err(AnalyticsError::BadRequest(format!("{name} is given twice")));
        }
        seen.push(name.clone());
        match name.as_ref() {
            "token" | "daterange" => {}
            "category" => o.category = Some(value.into_owned()).filter(|c| !c.is_empty()),
            "depth" => {
                let depth = value
                    .parse::<i64>()
                    .ok()
                    .filter(|d| *d >= -1)
                    .ok_or_else(|| {
                        AnalyticsError::BadRequest(format!(
                            "depth must be -1 or a whole number of levels, got {value:?}"
                        ))
                    })?;
                o.depth = Some(depth);
            }
            "agents" => {
                o.agents = Some(
                    value
                        .split(',')
                        .filter(|a| !a.is_empty())
                        .map(str::to_string)
                        .collect(),
                )
            }
            "zeros" => {
                o.zeros = match value.as_ref() {
                    "true" => true,
                    "false" => false,
                    other => {
                        return Err(AnalyticsError::BadRequest(format!(
                            "zeros must be true or false, got {other:?}"
                        )))
                    }
                }
            }
            other => {
                return Err(AnalyticsError::BadRequest(format!(
                    "unknown query parameter {other}: expected token, daterange, category, depth, \
                     agents, zeros"
                )))
            }
        }
    }
    Ok(o)
}

fn level(path: &str) -> i64 {
    path.split('.').count() as i64
}

/// Whether a category (its path) is returned for `wanted` and `depth` (-1: every level below).
fn selected(category: &str, wanted: Option<&str>, depth: i64) -> bool {
    match wanted {
        None => depth < 0 || level(category) <= 1 + depth,
        Some(wanted) => {
            let above = wanted.starts_with(&format!("{category}."));
            let below = category == wanted
                || (category.starts_with(&format!("{wanted}."))
                    && (depth < 0 || level(category) - level(wanted) <= depth));
            above || below
        }
    }
}

fn stats_object(row: &CategoryDayRow) -> Value {
    let calls = row.calls as f64;
    json!({
        "ncalls": row.hits,
        "hitmiss": decimal4(ratio(row.hits as f64, calls)),
        "coverage": decimal4(ratio(row.coverage, calls)),
        "duration": hms(row.duration),
        "silence": hms(row.silence),
    })
}

async fn run(
    state: &AnalyticsState,
    req: &HttpRequest,
    (company, organization, app, folder): (String, String, String, Option<String>),
) -> Result<HttpResponse, AnalyticsError> {
    let range = request_range(state, req, &company, &organization, folder.as_deref(), "-").await?;
    if crate::store::get_app(&state.db, &company, &app)
        .await?
        .is_none()
    {
        return Err(AnalyticsError::NotFound(format!(
            "Application not found: {app}"
        )));
    }
    let o = options(req)?;
    let Some(range) = range else {
        return Ok(HttpResponse::Ok().json(Vec::<Value>::new()));
    };
    let depth = o.depth.unwrap_or(if o.category.is_some() { 0 } else { -1 });
    let scope = StatsScope {
        company: &company,
        organization: &organization,
        folder: folder.as_deref(),
    };
    let rows = category_rows(&state.db, scope, &app, &range.plan()).await?;
    // Day -> agent -> that agent's object.
    let mut days: BTreeMap<&str, BTreeMap<&str, Map<String, Value>>> = BTreeMap::new();
    for row in &rows {
        if row.calls <= 0
            || o.agents
                .as_ref()
                .is_some_and(|a| !a.contains(&row.agent_id))
        {
            continue;
        }
        let agent = days
            .entry(&row.day)
            .or_default()
            .entry(&row.agent_id)
            .or_default();
        if row.category.is_empty() {
            agent.insert("calls".into(), json!(row.calls));
            agent.insert("overall".into(), stats_object(row));
        } else if selected(&row.category, o.category.as_deref(), depth) && (o.zeros || row.hits > 0)
        {
            agent.insert(row.category.clone(), stats_object(row));
        }
    }
    let out: Vec<Value> = days
        .into_iter()
        .map(|(day, agents)| {
            let agents: Vec<_> = agents
                .into_iter()
                .filter(|(_, a)| a.contains_key("overall"))
                .collect();
            let mut object = Map::new();
            object.insert("date".into(), json!(day.replace('-', "")));
            object.insert("agents".into(), json!(agents.len()));
            for (id, a) in agents {
                object.insert(id.to_string(), Value::Object(a));
            }
            Value::Object(object)
        })
        .filter(|d| d["agents"] != json!(0))
        .collect();
    Ok(HttpResponse::Ok().json(out))
}

/// Scores of an application per day and agent, over an organization
#[utoipa::path(get, path = "/appstats/{company}/{organization}/{app}", tag = "stats",
    params(("company" = String, Path), ("organization" = String, Path), ("app" = String, Path),
        ("token" = String, Query, description = "Access token (analytics:read)"),
        ("daterange" = Option<String>, Query, description = "$start-$end, each YYYYMMDD[HHmmss]"),
        ("category" = Option<String>, Query, description = "Category path, levels joined by '.'"),
        ("depth" = Option<i64>, Query, description = "Levels below the category; -1 all"),
        ("agents" = Option<String>, Query, description = "Comma-separated agent ids"),
        ("zeros" = Option<bool>, Query, description = "Also categories no call hit")),
    responses((status = 200, description = "One object per date with calls")))]
pub async fn appstats(
    state: Data<AnalyticsState>,
    req: HttpRequest,
    path: Path<(String, String, String)>,
) -> Result<HttpResponse, AnalyticsError> {
    let (company, organization, app) = path.into_inner();
    run(&state, &req, (company, organization, app, None)).await
}

/// Scores of an application per day and agent, in one folder
#[utoipa::path(get, path = "/appstats/{company}/{organization}/{app}/{folder}", tag = "stats",
    params(("company" = String, Path), ("organization" = String, Path), ("app" = String, Path),
        ("folder" = String, Path),
        ("token" = String, Query, description = "Access token (analytics:read)"),
        ("daterange" = Option<String>, Query, description = "$start-$end, each YYYYMMDD[HHmmss]"),
        ("category" = Option<String>, Query, description = "Category path, levels joined by '.'"),
        ("depth" = Option<i64>, Query, description = "Levels below the category; -1 all"),
        ("agents" = Option<String>, Query, description = "Comma-separated agent ids"),
        ("zeros" = Option<bool>, Query, description = "Also categories no call hit")),
    responses((status = 200, description = "One object per date with calls")))]
pub async fn appstats_folder(
    state: Data<AnalyticsState>,
    req: HttpRequest,
    path: Path<(String, String, String, String)>,
) -> Result<HttpResponse, AnalyticsError> {
    let (company, organization, app, folder) = path.into_inner();
    run(&state, &req, (company, organization, app, Some(folder))).await
}

#[cfg(test)]
mod tests {
    use super::selected;

    #[test]
    fn categories_by_path_and_depth() {
        // Without a category: -1 every level, 0 the top level, 1 two levels.
        assert!(selected("A.B.C", None, -1));
        assert!(selected("A", None, 0) && !selected("A.B", None, 0));
        assert!(selected("A.B", None, 1) && !selected("A.B.C", None, 1));
        // With one: its upper levels always, itself, and `depth` levels below.
        assert!(selected("A", Some("A.B"), 0));
        assert!(selected("A.B", Some("A.B"), 0));
        assert!(!selected("A.B.C", Some("A.B"), 0));
        assert!(selected("A.B.C", Some("A.B"), 1));
        assert!(!selected("A.B.C.D", Some("A.B"), 1));
        assert!(selected("A.B.C.D", Some("A.B"), -1));
        assert!(
            !selected("A.C", Some("A.B"), -1),
            "siblings are not returned"
        );
        assert!(!selected("AB", Some("A.B"), -1));
    }
}
