//! `GET /appstats/<company>/<organization>/<app>[/<folder>]`: per day, per agent, the scores of an
//! application's categories (docs/figures.md, `/appstats`), read from the daily rollups. Options:
//! `daterange` (default: every day up to today), `category` (a period-separated path; its upper levels
//! are returned too), `depth` (levels below it: 0 by default with a category, all (-1) without),
//! `agents` (comma-separated ids) and `zeros` (also categories no call hit).

use std::collections::BTreeSet;

use actix_web::http::header::ContentType;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::stats::request_range;
use crate::error::AnalyticsError;
use crate::figures::format::{ratio, Decimal4, Hms};
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
            // `a` is above `a.b`, `a.b` below `a`, and `ab` neither.
            let under = |path: &str, prefix: &str| {
                path.strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.'))
            };
            let above = under(wanted, category);
            let below = category == wanted
                || (under(category, wanted)
                    && (depth < 0 || level(category) - level(wanted) <= depth));
            above || below
        }
    }
}

/// One date of the answer and its agents, in agent order.
struct Day<'r> {
    /// YYYYMMDD.
    date: String,
    day: &'r str,
    agents: Vec<Agent<'r>>,
}

/// An agent's object: the application's row and the returned categories' rows, in category order.
struct Agent<'r> {
    id: &'r str,
    overall: &'r CategoryDayRow,
    categories: Vec<&'r CategoryDayRow>,
}

/// The stats object of a row (docs/figures.md).
struct Stats<'r>(&'r CategoryDayRow);

/// A value of an object of the answer.
enum Entry<'r> {
    Number(i64),
    Text(&'r str),
    Stats(&'r CategoryDayRow),
    Agent(&'r Agent<'r>),
}

impl Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Number(n) => s.serialize_i64(*n),
            Entry::Text(t) => s.serialize_str(t),
            Entry::Stats(row) => Stats(row).serialize(s),
            Entry::Agent(agent) => agent.serialize(s),
        }
    }
}

impl Serialize for Stats<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let row = self.0;
        let calls = row.calls as f64;
        let mut map = s.serialize_map(Some(5))?;
        // Each figure's text is made on the stack and written into the JSON as it is.
        Decimal4(ratio(row.coverage, calls)).with_text(|t| map.serialize_entry("coverage", t))?;
        Hms(row.duration).with_text(|t| map.serialize_entry("duration", t))?;
        Decimal4(ratio(row.hits as f64, calls)).with_text(|t| map.serialize_entry("hitmiss", t))?;
        map.serialize_entry("ncalls", &row.hits)?;
        Hms(row.silence).with_text(|t| map.serialize_entry("silence", t))?;
        map.end()
    }
}

/// Writes an object's fixed keys and its other entries (both in key order) as one object in key
/// order, the order of `serde_json::Map` (a `BTreeMap` here), in which the answer was first built: an
/// entry named like a fixed key takes its place, as inserting it into the map after the fixed keys did.
fn merged<'a, M: SerializeMap>(
    map: &mut M,
    fixed: &[(&str, Entry<'_>)],
    entries: impl Iterator<Item = (&'a str, Entry<'a>)>,
) -> Result<(), M::Error> {
    let mut fixed = fixed.iter().peekable();
    for (key, entry) in entries {
        while let Some((name, value)) = fixed.next_if(|(name, _)| *name <= key) {
            if *name < key {
                map.serialize_entry(name, value)?;
            }
        }
        map.serialize_entry(key, &entry)?;
    }
    for (name, value) in fixed {
        map.serialize_entry(name, value)?;
    }
    Ok(())
}

impl Serialize for Agent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let fixed = [
            ("calls", Entry::Number(self.overall.calls)),
            ("overall", Entry::Stats(self.overall)),
        ];
        let categories = self
            .categories
            .iter()
            .map(|row| (row.category.as_str(), Entry::Stats(row)));
        merged(&mut map, &fixed, categories)?;
        map.end()
    }
}

impl Serialize for Day<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let fixed = [
            ("agents", Entry::Number(self.agents.len() as i64)),
            ("date", Entry::Text(&self.date)),
        ];
        let agents = self.agents.iter().map(|a| (a.id, Entry::Agent(a)));
        merged(&mut map, &fixed, agents)?;
        map.end()
    }
}

/// The dates of the answer from the rows (in day, agent and category order, one per key): an agent is
/// returned on a date when the application scored calls of theirs (its row, `overall`), a date when it
/// returns an agent.
fn days<'r>(rows: &'r [CategoryDayRow], o: &Options, depth: i64) -> Vec<Day<'r>> {
    let mut days: Vec<Day<'r>> = Vec::new();
    for agent_rows in rows.chunk_by(|a, b| a.day == b.day && a.agent_id == b.agent_id) {
        let first = &agent_rows[0];
        if o.agents
            .as_ref()
            .is_some_and(|a| !a.contains(&first.agent_id))
        {
            continue;
        }
        let mut overall = None;
        let mut categories = Vec::new();
        for row in agent_rows.iter().filter(|row| row.calls > 0) {
            if row.category.is_empty() {
                overall = Some(row);
            } else if selected(&row.category, o.category.as_deref(), depth)
                && (o.zeros || row.hits > 0)
            {
                categories.push(row);
            }
        }
        let Some(overall) = overall else { continue };
        let agent = Agent {
            id: &first.agent_id,
            overall,
            categories,
        };
        match days.last_mut() {
            Some(day) if day.day == first.day => day.agents.push(agent),
            _ => days.push(Day {
                date: first.day.replace('-', ""),
                day: &first.day,
                agents: vec![agent],
            }),
        }
    }
    days
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
    // Written straight from the rows: over 30 days of 100 agents, 30,000 stats objects (3.4 MB).
    let mut body = Vec::with_capacity(rows.len() * 128 + 2);
    serde_json::to_writer(&mut body, &days(&rows, &o, depth))
        .map_err(|e| AnalyticsError::Internal(format!("writing the answer: {e}")))?;
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(body))
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
