//! A chart of daily figures: a `<figure>` holding the place uPlot draws in (`assets/console.js`), the
//! points as JSON for it, and the same figures as a table, as the API wrote them, for keyboards, screen
//! readers and browsers without script, or a link to the table elsewhere on the page that holds them.
//! Values are only converted to numbers for drawing (`0:03:20` is 200 seconds); nothing is computed.

use maud::{html, Markup, PreEscaped};
use serde::Serialize;

/// What the y axis counts.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Count,
    Seconds,
    Ratio,
}

/// One line of a chart: its label and, per date, the API's text and its number.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
    #[serde(skip)]
    pub texts: Vec<String>,
}

impl Series {
    /// A line from the API's texts, each read as `unit`.
    pub fn of(label: impl Into<String>, texts: Vec<String>, unit: Unit) -> Series {
        Series {
            label: label.into(),
            values: texts.iter().map(|text| number(text, unit)).collect(),
            texts,
        }
    }
}

/// A chart over `dates` (the API's `YYYYMMDD`).
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub unit: Unit,
    pub dates: Vec<String>,
    pub series: Vec<Series>,
}

/// The number a figure's text stands for: a count or ratio as written, a duration `H:MM:SS` in seconds.
pub fn number(text: &str, unit: Unit) -> Option<f64> {
    match unit {
        Unit::Seconds => {
            let mut seconds = 0.0;
            for part in text.split(':') {
                seconds = seconds * 60.0 + part.trim().parse::<f64>().ok()?;
            }
            Some(seconds)
        }
        Unit::Count | Unit::Ratio => text.trim().parse().ok(),
    }
}

/// The chart's markup, its figures as a table of its own.
pub fn figure(chart: &Chart) -> Markup {
    let table = html! {
        table {
            caption.visually-hidden { (chart.title) }
            thead {
                tr {
                    th scope="col" { "Date" }
                    @for series in &chart.series { th scope="col" { (series.label) } }
                }
            }
            tbody {
                @for (row, date) in chart.dates.iter().enumerate() {
                    tr {
                        th scope="row" { (date) }
                        @for series in &chart.series {
                            td { (series.texts.get(row).map(String::as_str).unwrap_or("")) }
                        }
                    }
                }
            }
        }
    };
    drawn(chart, table)
}

/// The markup of a chart whose figures are all in a table elsewhere on the page (`table_id`, named
/// `table_name`): a link to it rather than a copy.
pub fn figure_of_table(chart: &Chart, table_id: &str, table_name: &str) -> Markup {
    let link = html! {
        p { "Its figures: " a href={ "#" (table_id) } { (table_name) } "." }
    };
    drawn(chart, link)
}

/// The place uPlot draws in, the points for it, then `figures`.
fn drawn(chart: &Chart, figures: Markup) -> Markup {
    let data = serde_json::to_string(chart)
        .unwrap_or_default()
        // The JSON sits in a script element: no `</script>` may close it early.
        .replace('<', "\\u003c");
    html! {
        figure.chart id=(chart.id) {
            figcaption { (chart.title) }
            div.plot aria-hidden="true" {}
            script type="application/json" class="chart-data" { (PreEscaped(data)) }
            div.figures { (figures) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_seconds_and_others_as_written() {
        assert_eq!(number("0:03:20", Unit::Seconds), Some(200.0));
        assert_eq!(number("12:00:01", Unit::Seconds), Some(43201.0));
        assert_eq!(number("0.7500", Unit::Ratio), Some(0.75));
        assert_eq!(number("3", Unit::Count), Some(3.0));
        assert_eq!(number("", Unit::Count), None);
        assert_eq!(number("n/a", Unit::Seconds), None);
    }

    #[test]
    fn the_data_cannot_close_its_script_element() {
        let chart = Chart {
            id: "c".into(),
            title: "t".into(),
            unit: Unit::Count,
            dates: vec!["20261120".into()],
            series: vec![Series::of(
                "</script><script>alert(1)</script>",
                vec!["1".into()],
                Unit::Count,
            )],
        };
        let html = figure(&chart).into_string();
        assert_eq!(html.matches("</script>").count(), 1, "{html}");
        assert!(
            html.contains("&lt;/script&gt;"),
            "the table escapes the label: {html}"
        );
    }
}
