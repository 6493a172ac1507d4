//! `GET /appstats/<company>/<organization>/<app>[/<folder>]`: per day, per agent, the scores of an
//! application's categories (docs/figures.md, `/appstats`), read from the daily rollups. Options:
//! `daterange` (default: every day up to today), `category` (a period-separated path; its upper levels
//! are returned too), `depth` (levels below it: 0 by default with a category, all (-1) without),
//! `agents` (comma-separated ids) and `zeros` (also categories no call hit). A category that is not one of
//! the application's is refused (400), as `/appmatches` does.

use std::collections::BTreeSet;

use actix_web::http::header::ContentType;
use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use serde_json::Value;

use super::stats::request_range;
use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::routes::paths::{FolderAppPath, OrganizationAppPath};
use crate::state::AnalyticsState;
use analytics_store::rollups::CategoryDayDelta;
use analytics_store::stats::{scorecards, AgentScorecard, StatsScope};
use scoring::figures::format::{ratio, Decimal4, Hms};
use scoring::names::{FolderName, RESERVED_AGENT_IDS};

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

/// Whether `path` (levels joined by `.`) is a category of the stored definition (its normalized JSON,
/// docs/scoring.md), as `/appmatches` checks the paths it is asked for.
fn has_category(definition: &str, path: &str) -> Result<bool, AnalyticsError> {
    let definition: Value = serde_json::from_str(definition).map_err(AnalyticsError::internal)?;
    let mut level = definition.get("categories");
    for name in path.split('.') {
        let Some(category) = level.and_then(|categories| categories.get(name)) else {
            return Ok(false);
        };
        level = category.get("subcategories");
    }
    Ok(true)
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

/// An agent's object: the application's sums and the returned categories', in category order.
struct Agent<'r> {
    id: &'r str,
    overall: &'r CategoryDayDelta,
    categories: Vec<(&'r str, &'r CategoryDayDelta)>,
}

/// The answer, written by hand into one buffer. Its keys and figures are ASCII known in advance, so only
/// names (agent ids, category paths, the fixed keys) go through serde_json's escaping: once the rows were
/// packed, escaping the five keys and four figures of each of 30,000 stats objects was the largest cost of
/// a 30-day answer. The bytes are those `serde_json` wrote from the same entries.
struct Json(Vec<u8>);

/// A value of an object of the answer.
enum Entry<'r> {
    Number(i64),
    Text(&'r str),
    Stats(&'r CategoryDayDelta),
    Agent(&'r Agent<'r>),
}

impl Json {
    fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    /// A JSON string, escaped as serde_json escapes it.
    fn string(&mut self, text: &str) {
        // Writing into a vector cannot fail.
        let _ = serde_json::to_writer(&mut self.0, text);
    }

    fn number(&mut self, n: i64) {
        self.raw(itoa::Buffer::new().format(n).as_bytes());
    }

    fn value(&mut self, entry: &Entry<'_>) {
        match entry {
            Entry::Number(n) => self.number(*n),
            Entry::Text(t) => self.string(t),
            Entry::Stats(sums) => self.stats(sums),
            Entry::Agent(agent) => self.agent(agent),
        }
    }

    /// The stats object of a category's sums (docs/figures.md), its keys in order.
    fn stats(&mut self, sums: &CategoryDayDelta) {
        let calls = sums.calls as f64;
        self.raw(br#"{"coverage":""#);
        Decimal4(ratio(sums.coverage, calls)).with_bytes(|t| self.raw(t));
        self.raw(br#"","duration":""#);
        Hms(sums.duration).with_bytes(|t| self.raw(t));
        self.raw(br#"","hitmiss":""#);
        Decimal4(ratio(sums.hits as f64, calls)).with_bytes(|t| self.raw(t));
        self.raw(br#"","ncalls":"#);
        self.number(sums.hits);
        self.raw(br#","silence":""#);
        Hms(sums.silence).with_bytes(|t| self.raw(t));
        self.raw(br#""}"#);
    }

    /// An object of fixed keys and other entries (both in key order) in key order, the order of
    /// `serde_json::Map` (a `BTreeMap` here), in which the answer was first built. A fixed key is always
    /// written: an entry named like one is left out (uploads refuse such names, but rows stored before
    /// they did may hold them), so a client can always read `date`, `agents`, `calls` and `overall`.
    fn object<'a>(
        &mut self,
        fixed: &[(&str, Entry<'_>)],
        entries: impl Iterator<Item = (&'a str, Entry<'a>)>,
    ) {
        let mut first = true;
        let mut entry = |json: &mut Json, key: &str, value: &Entry<'_>| {
            json.raw(if first { b"{" } else { b"," });
            first = false;
            json.string(key);
            json.raw(b":");
            json.value(value);
        };
        let mut fixed = fixed.iter().peekable();
        for (key, value) in entries {
            while let Some((name, fixed_value)) = fixed.next_if(|(name, _)| *name < key) {
                entry(self, name, fixed_value);
            }
            if fixed.peek().is_some_and(|(name, _)| *name == key) {
                continue;
            }
            entry(self, key, &value);
        }
        for (name, value) in fixed {
            entry(self, name, value);
        }
        self.raw(if first { b"{}" } else { b"}" });
    }

    fn agent(&mut self, agent: &Agent<'_>) {
        let fixed = [
            ("calls", Entry::Number(agent.overall.calls)),
            ("overall", Entry::Stats(agent.overall)),
        ];
        let categories = agent
            .categories
            .iter()
            .map(|&(path, sums)| (path, Entry::Stats(sums)));
        self.object(&fixed, categories);
    }

    fn day(&mut self, day: &Day<'_>) {
        let fixed = [
            ("agents", Entry::Number(day.agents.len() as i64)),
            ("date", Entry::Text(&day.date)),
        ];
        let agents = day.agents.iter().map(|a| (a.id, Entry::Agent(a)));
        self.object(&fixed, agents);
    }

    /// The answer: an array of the days.
    fn days(&mut self, days: &[Day<'_>]) {
        self.raw(b"[");
        for (i, day) in days.iter().enumerate() {
            if i > 0 {
                self.raw(b",");
            }
            self.day(day);
        }
        self.raw(b"]");
    }
}

/// The dates of the answer from the scorecards (in day and agent order, one per agent's day): an agent
/// is returned on a date when the application scored calls of theirs (its sums, `overall`), a date when
/// it returns an agent. An agent id that names a key of the day (stored before uploads refused it) is
/// left out, and not counted in `agents`.
fn days<'r>(cards: &'r [AgentScorecard], o: &Options, depth: i64) -> Vec<Day<'r>> {
    let mut days: Vec<Day<'r>> = Vec::new();
    for card in cards {
        if RESERVED_AGENT_IDS.contains(&card.agent_id.as_str())
            || o.agents
                .as_ref()
                .is_some_and(|a| !a.contains(&card.agent_id))
        {
            continue;
        }
        let mut overall = None;
        let mut categories = Vec::new();
        for (path, sums) in card.categories.iter().filter(|(_, sums)| sums.calls > 0) {
            if path.is_empty() {
                overall = Some(sums);
            } else if selected(path, o.category.as_deref(), depth) && (o.zeros || sums.hits > 0) {
                categories.push((&**path, sums));
            }
        }
        let Some(overall) = overall else { continue };
        let agent = Agent {
            id: &card.agent_id,
            overall,
            categories,
        };
        match days.last_mut() {
            Some(day) if day.day == card.day => day.agents.push(agent),
            _ => days.push(Day {
                date: card.day.replace('-', ""),
                day: &card.day,
                agents: vec![agent],
            }),
        }
    }
    days
}

async fn run(
    state: &AnalyticsState,
    req: &HttpRequest,
    OrganizationAppPath {
        company,
        organization,
        app,
    }: OrganizationAppPath,
    folder: Option<FolderName>,
) -> Result<HttpResponse, AnalyticsError> {
    let range = request_range(state, req, &company, &organization, folder.as_deref(), "-").await?;
    let Some(row) = analytics_store::get_app(&state.db, &company, &app).await? else {
        return Err(AnalyticsError::NotFound(format!(
            "Application not found: {app}"
        )));
    };
    let o = options(req)?;
    if let Some(category) = &o.category {
        if !has_category(&row.definition, category)? {
            return Err(AnalyticsError::category_not_found(category, &app));
        }
    }
    let Some(range) = range else {
        return Ok(HttpResponse::Ok().json(Vec::<Value>::new()));
    };
    let depth = o.depth.unwrap_or(if o.category.is_some() { 0 } else { -1 });
    let scope = StatsScope {
        company: &company,
        organization: &organization,
        folder: folder.as_deref(),
    };
    let cards = scorecards(&state.db, scope, &app, &range.plan()).await?;
    // Written straight from the scorecards: over 30 days of 100 agents in 10 categories, 30,000 stats
    // objects (3.4 MB).
    let categories: usize = cards.iter().map(|card| card.categories.len()).sum();
    let mut body = Json(Vec::with_capacity(categories * 128 + 2));
    body.days(&days(&cards, &o, depth));
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(body.0))
}

/// Scores of an application per day and agent, over an organization
#[utoipa::path(get, path = "/appstats/{company}/{organization}/{app}", tag = "stats",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("app" = String, Path),
        ("daterange" = Option<String>, Query, description = "$start-$end, each YYYYMMDD[HHmmss]"),
        ("category" = Option<String>, Query, description = "Category path, levels joined by '.'"),
        ("depth" = Option<i64>, Query, minimum = -1, description = "Levels below the category; -1 all"),
        ("agents" = Option<String>, Query, description = "Comma-separated agent ids"),
        ("zeros" = Option<bool>, Query, description = "Also categories no call hit")),
    responses((status = 200, description = "One object per date with calls"),
        (status = 404, description = "Application not found: <app>, or Category not found: <path> of \
            application <app> (text/html)")))]
pub async fn appstats(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    req: HttpRequest,
    path: Path<OrganizationAppPath>,
) -> Result<HttpResponse, AnalyticsError> {
    run(&state, &req, path.into_inner(), None).await
}

/// Scores of an application per day and agent, in one folder
#[utoipa::path(get, path = "/appstats/{company}/{organization}/{app}/{folder}", tag = "stats",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("app" = String, Path),
        ("folder" = String, Path),
        ("daterange" = Option<String>, Query, description = "$start-$end, each YYYYMMDD[HHmmss]"),
        ("category" = Option<String>, Query, description = "Category path, levels joined by '.'"),
        ("depth" = Option<i64>, Query, minimum = -1, description = "Levels below the category; -1 all"),
        ("agents" = Option<String>, Query, description = "Comma-separated agent ids"),
        ("zeros" = Option<bool>, Query, description = "Also categories no call hit")),
    responses((status = 200, description = "One object per date with calls"),
        (status = 404, description = "Application not found: <app>, or Category not found: <path> of \
            application <app> (text/html)")))]
pub async fn appstats_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    req: HttpRequest,
    path: Path<FolderAppPath>,
) -> Result<HttpResponse, AnalyticsError> {
    let FolderAppPath {
        company,
        organization,
        app,
        folder,
    } = path.into_inner();
    let path = OrganizationAppPath {
        company,
        organization,
        app,
    };
    run(&state, &req, path, Some(folder)).await
}

#[cfg(test)]
mod tests {
    use super::{has_category, selected, Entry, Json};

    #[test]
    fn categories_are_looked_up_level_by_level() {
        let definition = r#"{"categories":{"Greeting":{"phrases":["hello"]},
            "Sales":{"subcategories":{"Upsell":{"phrases":["premium"]}}}}}"#;
        for known in ["Greeting", "Sales", "Sales.Upsell"] {
            assert!(has_category(definition, known).unwrap(), "{known}");
        }
        for unknown in [
            "Nope",
            "sales",
            "Greeting.Upsell",
            "Sales.Upsell.More",
            "Upsell",
            "",
        ] {
            assert!(!has_category(definition, unknown).unwrap(), "{unknown}");
        }
        assert!(!has_category("{}", "Sales").unwrap());
    }

    #[test]
    fn an_entry_named_like_a_fixed_key_never_replaces_it() {
        let mut json = Json(Vec::new());
        let fixed = [
            ("agents", Entry::Number(2)),
            ("date", Entry::Text("20261120")),
        ];
        let entries = [
            ("a1", Entry::Number(1)),
            ("agents", Entry::Number(7)),
            ("b", Entry::Number(3)),
            ("date", Entry::Text("not a date")),
            ("z", Entry::Number(4)),
        ];
        json.object(&fixed, entries.into_iter());
        assert_eq!(
            String::from_utf8(json.0).unwrap(),
            r#"{"a1":1,"agents":2,"b":3,"date":"20261120","z":4}"#
        );
    }

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
