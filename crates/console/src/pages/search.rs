//! The search page: a search box over an organization (or one folder of it) and a page of hits, each
//! with the API's snippet, its matched words as `<mark>`, and a link to the call's page.

use maud::{html, Markup};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::{segment, unescape};

/// One hit as the API answers it.
#[derive(Debug, Deserialize)]
pub struct Hit {
    #[serde(rename = "tId")]
    pub call: String,
    pub folder: String,
    pub datetime: String,
    pub snippet: String,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

/// A page of hits as the API answers it.
#[derive(Debug, Deserialize)]
pub struct Hits {
    pub total: u64,
    pub offset: u64,
    pub limit: u64,
    pub hits: Vec<Hit>,
}

/// What was searched.
pub struct Asked<'a> {
    pub organization: &'a str,
    pub folder: &'a str,
    pub q: &'a str,
}

/// The snippet's pieces: text, and whether it is a matched word. The API escapes the text for HTML and
/// marks matches with `<em>`; the page escapes again as it writes, so the pieces are plain text.
pub fn snippet_pieces(snippet: &str) -> Vec<(String, bool)> {
    let mut pieces = Vec::new();
    let mut rest = snippet;
    while let Some(start) = rest.find("<em>") {
        let (before, after) = rest.split_at(start);
        let after = &after["<em>".len()..];
        let (matched, next) = after.split_once("</em>").unwrap_or((after, ""));
        if !before.is_empty() {
            pieces.push((unescape(before), false));
        }
        pieces.push((unescape(matched), true));
        rest = next;
    }
    if !rest.is_empty() {
        pieces.push((unescape(rest), false));
    }
    pieces
}

fn field_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

pub fn content(
    company: &str,
    organizations: &[String],
    asked: &Asked<'_>,
    hits: Option<&Hits>,
) -> Markup {
    html! {
        form.search method="get" action={ "/console/" (company) "/search" } role="search" {
            label for="organization" { "Organization" }
            select id="organization" name="organization" {
                @for organization in organizations {
                    option value=(organization) selected[organization == asked.organization] { (organization) }
                }
            }
            label for="folder" { "Folder (optional)" }
            input id="folder" type="text" name="folder" value=(asked.folder);
            label for="q" { "Words" }
            input id="q" type="search" name="q" value=(asked.q);
            button type="submit" { "Search" }
        }
        @if let Some(hits) = hits {
            p.total role="status" {
                (hits.total) @if hits.total == 1 { " call" } @else { " calls" }
            }
            ol.hits start=(hits.offset + 1) {
                @for hit in &hits.hits {
                    li.hit {
                        p.meta {
                            a.call href=(call_link(company, asked.organization, &hit.call)) { (hit.call) }
                            " · " (hit.folder) " · " time { (hit.datetime) }
                        }
                        @let pieces = snippet_pieces(&hit.snippet);
                        @if !pieces.is_empty() {
                            p.snippet {
                                @for (text, matched) in &pieces {
                                    @if *matched { mark { (text) } } @else { (text) }
                                }
                            }
                        }
                        @if !hit.metadata.is_empty() {
                            dl.metadata {
                                @for (field, value) in &hit.metadata {
                                    dt { (field) }
                                    dd { (field_text(value)) }
                                }
                            }
                        }
                    }
                }
            }
            nav.pages aria-label="Pages of hits" {
                @if hits.offset > 0 {
                    a rel="prev" href=(page_link(company, asked, hits.offset.saturating_sub(hits.limit))) { "Previous" }
                }
                @if hits.offset + (hits.hits.len() as u64) < hits.total {
                    a rel="next" href=(page_link(company, asked, hits.offset + hits.limit)) { "Next" }
                }
            }
        }
    }
}

fn call_link(company: &str, organization: &str, call: &str) -> String {
    format!(
        "/console/{company}/calls/{}/{}",
        segment(organization),
        segment(call)
    )
}

fn page_link(company: &str, asked: &Asked<'_>, offset: u64) -> String {
    let query = serde_urlencoded::to_string([
        ("organization", asked.organization),
        ("folder", asked.folder),
        ("q", asked.q),
        ("offset", &offset.to_string()),
    ])
    .unwrap_or_default();
    format!("/console/{company}/search?{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matched_words_become_marks_and_the_rest_stays_text() {
        assert_eq!(
            snippet_pieces("…a &lt;b&gt; <em>Refund</em> &amp; <em>more</em>"),
            vec![
                ("…a <b> ".to_string(), false),
                ("Refund".to_string(), true),
                (" & ".to_string(), false),
                ("more".to_string(), true),
            ]
        );
        assert!(snippet_pieces("").is_empty());
        let html = content(
            "acme",
            &["main".into()],
            &Asked {
                organization: "main",
                folder: "",
                q: "x",
            },
            Some(&Hits {
                total: 1,
                offset: 0,
                limit: 20,
                hits: vec![Hit {
                    call: "t1".into(),
                    folder: "calls".into(),
                    datetime: "2026-11-20T09:00:00".into(),
                    snippet: "&lt;script&gt; <em>x</em>".into(),
                    metadata: Map::new(),
                }],
            }),
        )
        .into_string();
        assert!(html.contains("&lt;script&gt; <mark>x</mark>"), "{html}");
        assert!(html.contains("type=\"search\""));
    }
}
