//! A folder's dashboard: the date range picker, the charts of `/stats` (calls, average duration and
//! silence, agent and client talk, emotions) and per application of the folder the agents' table and a
//! trend line per category from `/appstats` (top-level categories). The API's answers are taken as they
//! are: a figure the API left out is an empty cell, never one computed here.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use maud::{html, Markup};
use serde_json::Value;

use super::charts::{figure, figure_of_table, Chart, Series, Unit};
use crate::appstats::AppDay;

/// The value at `path` in `day`, if the API gave it.
fn at<'v>(day: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(day, |value, key| value.get(key))
}

/// The text of the figure at `path` in `day` (a number written as the API wrote it).
fn text(day: &Value, path: &[&str]) -> String {
    match at(day, path) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => String::new(),
    }
}

fn dates(days: &[Value]) -> Vec<String> {
    days.iter().map(|day| text(day, &["date"])).collect()
}

fn series(days: &[Value], label: &str, path: &[&str], unit: Unit) -> Series {
    Series::of(
        label,
        days.iter().map(|day| text(day, path)).collect(),
        unit,
    )
}

/// The charts of a folder's `/stats` answer.
pub fn stats_charts(days: &[Value]) -> Vec<Chart> {
    let chart = |id: &str, title: &str, unit: Unit, series: Vec<Series>| Chart {
        id: id.into(),
        title: title.into(),
        unit,
        dates: dates(days),
        series,
    };
    let emotions = |who: &str| {
        ["positive", "improving", "worsening", "negative"]
            .iter()
            .map(|emotion| series(days, emotion, &[who, "emotion", emotion], Unit::Count))
            .collect()
    };
    vec![
        chart(
            "calls",
            "Calls",
            Unit::Count,
            vec![series(days, "Calls", &["calls"], Unit::Count)],
        ),
        chart(
            "duration",
            "Average duration and silence",
            Unit::Seconds,
            vec![
                series(days, "Duration", &["avgduration"], Unit::Seconds),
                series(days, "Silence", &["avgsilence"], Unit::Seconds),
            ],
        ),
        chart(
            "talk",
            "Average talk time",
            Unit::Seconds,
            vec![
                series(days, "Agent", &["agent", "talk", "avg"], Unit::Seconds),
                series(days, "Client", &["client", "talk", "avg"], Unit::Seconds),
            ],
        ),
        chart(
            "agent-emotion",
            "Agent emotion (calls)",
            Unit::Count,
            emotions("agent"),
        ),
        chart(
            "client-emotion",
            "Client emotion (calls)",
            Unit::Count,
            emotions("client"),
        ),
    ]
}

/// An application's figures over the range, from its `/appstats` answer.
pub struct AppFigures<'a> {
    pub app: String,
    pub days: Vec<AppDay<'a>>,
    /// The agents and the categories the answer names, in its order.
    pub agents: Vec<Cow<'a, str>>,
    pub categories: Vec<Cow<'a, str>>,
    /// Each agent's place in `agents` (its line in a trend chart).
    lines: HashMap<Cow<'a, str>, usize>,
}

impl<'a> AppFigures<'a> {
    pub fn of(app: &str, days: Vec<AppDay<'a>>) -> AppFigures<'a> {
        let (mut agents, mut lines) = (Vec::new(), HashMap::new());
        let (mut categories, mut seen_categories) = (Vec::new(), HashSet::new());
        for figures in days.iter().flat_map(|day| &day.agents) {
            if !lines.contains_key(&figures.agent) {
                lines.insert(figures.agent.clone(), agents.len());
                agents.push(figures.agent.clone());
            }
            for (category, _) in &figures.categories {
                if seen_categories.insert(category.clone()) {
                    categories.push(category.clone());
                }
            }
        }
        AppFigures {
            app: app.to_string(),
            days,
            agents,
            categories,
            lines,
        }
    }

    fn has_rows(&self) -> bool {
        self.days.iter().any(|day| !day.agents.is_empty())
    }

    /// A trend line per agent of the category's (or, without one, `overall`'s) hit/miss ratio.
    pub fn trend(&self, index: usize, category: Option<&str>) -> Chart {
        let mut texts = vec![vec![String::new(); self.days.len()]; self.agents.len()];
        for (column, day) in self.days.iter().enumerate() {
            for figures in &day.agents {
                let hitmiss = match category {
                    Some(category) => figures.hitmiss(category),
                    None => &figures.overall.hitmiss,
                };
                texts[self.lines[&figures.agent]][column] = hitmiss.text();
            }
        }
        Chart {
            id: format!("app-{}-{index}", slug(&self.app)),
            title: format!("{} · {} hit/miss", self.app, category.unwrap_or("overall")),
            unit: Unit::Ratio,
            dates: self.days.iter().map(|day| day.date.text()).collect(),
            series: self
                .agents
                .iter()
                .zip(texts)
                .map(|(agent, texts)| Series::of(agent.as_ref(), texts, Unit::Ratio))
                .collect(),
        }
    }
}

/// An id-safe form of a name.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The application's section: its agents' table and its trend charts, whose figures are that table's.
pub fn app_section(figures: &AppFigures) -> Markup {
    let id = format!("app-{}", slug(&figures.app));
    let table = format!("{id}-agents");
    let caption = format!("Agents of {}", figures.app);
    html! {
        section.app aria-labelledby={ (id) "-title" } data-app=(figures.app) {
            h2 id={ (id) "-title" } { "Application " (figures.app) }
            @if !figures.has_rows() {
                p { "No call of the range was scored by this application." }
            } @else {
                div.figures {
                    table.agents id=(table) {
                        caption { (caption) }
                        thead {
                            tr {
                                th scope="col" { "Date" }
                                th scope="col" { "Agent" }
                                th scope="col" { "Calls" }
                                th scope="col" { "Hit/miss" }
                                th scope="col" { "Coverage" }
                                @for category in &figures.categories {
                                    th scope="col" { (category) " hit/miss" }
                                }
                            }
                        }
                        tbody {
                            @for day in &figures.days {
                                @for row in &day.agents {
                                    tr {
                                        td { (day.date) }
                                        th scope="row" { (row.agent) }
                                        td { (row.calls) }
                                        td { (row.overall.hitmiss) }
                                        td { (row.overall.coverage) }
                                        @for category in &figures.categories {
                                            td { (row.hitmiss(category)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                (figure_of_table(&figures.trend(0, None), &table, &caption))
                @for (index, category) in figures.categories.iter().enumerate() {
                    (figure_of_table(&figures.trend(index + 1, Some(category)), &table, &caption))
                }
            }
        }
    }
}

/// The range picker: `from` and `to` as `YYYY-MM-DD`.
pub fn range_form(from: &str, to: &str) -> Markup {
    html! {
        form.range method="get" {
            label for="from" { "From" }
            input id="from" type="date" name="from" value=(from) required;
            label for="to" { "To" }
            input id="to" type="date" name="to" value=(to) required;
            button type="submit" { "Show" }
        }
    }
}

/// The whole dashboard.
pub fn content(
    from: &str,
    to: &str,
    stats: &[Chart],
    apps: &[AppFigures],
    no_calls: bool,
) -> Markup {
    html! {
        (range_form(from, to))
        @if no_calls {
            p.notice role="status" { "No calls in this range." }
        }
        section.stats aria-labelledby="stats-title" {
            h2 id="stats-title" { "Daily statistics" }
            div.charts {
                @for chart in stats { (figure(chart)) }
            }
        }
        @for app in apps { (app_section(app)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_api_s_figures_are_shown_as_written() {
        let days = vec![
            json!({"date": "20261120", "calls": 3, "avgduration": "0:03:20",
            "agent": {"talk": {"avg": "0:00:50"}, "emotion": {"positive": 1}}}),
        ];
        let charts = stats_charts(&days);
        assert_eq!(charts[0].series[0].texts, vec!["3"]);
        assert_eq!(charts[1].series[0].values, vec![Some(200.0)]);
        assert_eq!(
            charts[1].series[1].texts,
            vec![""],
            "a figure left out stays empty"
        );
        assert_eq!(charts[3].series[0].texts, vec!["1"]);
    }

    #[test]
    fn agents_and_categories_come_from_the_days() {
        let answer = json!([
            {"date": "20261120", "agents": 1,
             "a1": {"calls": 2, "overall": {"hitmiss": "1.0000"}, "Sales": {"hitmiss": "0.5000"}}},
            {"date": "20261121", "agents": 2, "a2": {"calls": 1, "overall": {"hitmiss": "0.0000"}},
             "a1": {"calls": 1, "overall": {"hitmiss": "0.5000"}, "Greeting": {"hitmiss": "1.0000"}}},
        ])
        .to_string();
        let figures = AppFigures::of("sales", crate::appstats::read(answer.as_bytes()).unwrap());
        assert_eq!(figures.agents, vec!["a1", "a2"]);
        assert_eq!(figures.categories, vec!["Sales", "Greeting"]);
        let trend = figures.trend(1, Some("Sales"));
        assert_eq!(trend.dates, vec!["20261120", "20261121"]);
        assert_eq!(trend.series.len(), 2);
        assert_eq!(trend.series[0].texts, vec!["0.5000", ""]);
        let overall = figures.trend(0, None);
        assert_eq!(overall.series[1].label, "a2");
        assert_eq!(overall.series[1].texts, vec!["", "0.0000"]);

        let page = app_section(&figures).into_string();
        assert_eq!(
            page.matches("<tr>").count(),
            1 + 3,
            "a row per day and agent"
        );
        assert_eq!(
            page.matches("<table").count(),
            1,
            "the trend charts point to the agents' table rather than repeat it: {page}"
        );
        assert!(page.contains(r##"href="#app-sales-agents""##), "{page}");
    }

    #[test]
    fn names_from_the_answer_are_escaped() {
        let answer = json!([{"date": "20261120", "agents": 1,
            "<i>a</i>": {"calls": "<b>", "overall": {"hitmiss": "1"}, "</script><c>": {"hitmiss": "1"}}}])
        .to_string();
        let figures = AppFigures::of("<app>", crate::appstats::read(answer.as_bytes()).unwrap());
        let page = app_section(&figures).into_string();
        for raw in ["<i>", "<b>", "<c>", "<app>"] {
            assert!(!page.contains(raw), "{raw} left as markup: {page}");
        }
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "one per trend chart: {page}"
        );
    }
}
