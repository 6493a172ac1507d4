//! A call's page: what it is (folder, time, agent, length), its recording when it has one, its
//! transcript with the phrase matches marked (`transcript`), the scorecard of its applications, and its
//! metadata, each field a form of its own that sets or removes it through the API.

use std::collections::BTreeMap;

use maud::{html, Markup};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::transcript::{self, clock, Utterance};

/// A call as `GET /calls` answers it.
#[derive(Debug, Deserialize)]
pub struct Call {
    #[serde(rename = "tId")]
    pub id: String,
    pub organization: String,
    pub folder: String,
    #[serde(default)]
    pub filename: String,
    #[serde(default)]
    pub datetime: String,
    #[serde(default)]
    pub agent_id: String,
    #[serde(default)]
    pub audio_seconds: Option<f64>,
    #[serde(default)]
    pub metadata: BTreeMap<String, Value>,
    #[serde(default)]
    pub utterances: Vec<Utterance>,
    #[serde(default)]
    pub audio: bool,
}

/// A metadata form sent back with the API's refusal, shown beside the fields as it was typed.
pub struct Refused<'a> {
    pub field: &'a str,
    pub value: &'a str,
    pub message: &'a str,
}

/// Where the call's page and its forms are.
pub fn call_url(company: &str, call: &Call) -> String {
    format!(
        "/console/{company}/calls/{}/{}",
        crate::api::segment(&call.organization),
        crate::api::segment(&call.id)
    )
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

pub fn content(
    company: &str,
    csrf: &str,
    call: &Call,
    scorecard: Option<&Map<String, Value>>,
    refused: Option<&Refused<'_>>,
) -> Markup {
    let here = call_url(company, call);
    let matches = scorecard.map(transcript::matches).unwrap_or_default();
    let dashboard = format!(
        "/console/{company}/{}/{}/",
        crate::api::segment(&call.organization),
        crate::api::segment(&call.folder)
    );
    html! {
        dl.facts {
            dt { "Folder" } dd { a href=(dashboard) { (call.organization) " / " (call.folder) } }
            dt { "Time" } dd { time { (call.datetime) } }
            dt { "Agent" } dd { (if call.agent_id.is_empty() { "(none)" } else { call.agent_id.as_str() }) }
            @if let Some(seconds) = call.audio_seconds { dt { "Length" } dd { (clock(seconds)) } }
            dt { "File" } dd { (call.filename) }
        }
        @if call.audio {
            audio.recording controls preload="metadata" src={ (here) "/audio" } {
                a href={ (here) "/audio" } { "Download the recording" }
            }
        }
        section aria-labelledby="transcript-title" {
            h2 id="transcript-title" { "Transcript" }
            @if call.utterances.is_empty() {
                p.muted { "Nothing was said." }
            } @else {
                (transcript::render(&call.utterances, &matches, call.audio))
            }
        }
        section aria-labelledby="scorecard-title" {
            h2 id="scorecard-title" { "Scorecard" }
            @match scorecard {
                Some(card) => { (scorecard_list(card)) }
                None => { p.muted { "No phrase of the folder's applications matched this call." } }
            }
        }
        section aria-labelledby="metadata-title" id="metadata" {
            h2 id="metadata-title" { "Metadata" }
            @if let Some(refused) = refused {
                p.error role="alert" { (refused.field) ": " (refused.message) }
            }
            @for (i, (field, value)) in call.metadata.iter().enumerate() {
                @let shown = match refused { Some(r) if r.field == field.as_str() => r.value.to_string(), _ => text(value) };
                form.field method="post" action={ (here) "/metadata" } {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="field" value=(field);
                    label for={ "field-" (i) } { (field) }
                    input id={ "field-" (i) } type="text" name="value" value=(shown);
                    button type="submit" name="action" value="set" { "Save" }
                    button.secondary type="submit" name="action" value="delete"
                        aria-label={ "Remove " (field) } { "Remove" }
                }
            }
            @let (new_field, new_value) = match refused {
                Some(r) if !call.metadata.contains_key(r.field) => (r.field, r.value),
                _ => ("", ""),
            };
            form.field.add method="post" action={ (here) "/metadata" } {
                input type="hidden" name="csrf" value=(csrf);
                input type="hidden" name="action" value="set";
                label for="new-field" { "New field" }
                input id="new-field" type="text" name="field" value=(new_field) required;
                label for="new-value" { "Value" }
                input id="new-value" type="text" name="value" value=(new_value);
                button type="submit" { "Add" }
            }
        }
    }
}

/// Each application's categories with their scores, nested as the application nests them.
fn scorecard_list(card: &Map<String, Value>) -> Markup {
    html! {
        @for (app, categories) in card {
            h3 { (app) }
            @if let Some(failed) = categories["failed"].as_str() {
                p.error { "Not scored: " (failed) }
            } @else if let Some(categories) = categories.as_object() {
                (category_list(categories))
            }
        }
    }
}

fn category_list(categories: &Map<String, Value>) -> Markup {
    html! {
        ul.scorecard {
            @for (name, category) in categories {
                li {
                    span.category { (name) } ": " span.score { (text(&category["score"])) }
                    @if let Some(sub) = category["subcategories"].as_object() {
                        (category_list(sub))
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call() -> Call {
        serde_json::from_value(json!({
            "tId": "t1", "organization": "main", "folder": "calls", "filename": "a.wav",
            "datetime": "2026-11-20T09:00:00", "agent_id": "ann", "audio_seconds": 65.0,
            "metadata": {"queue": "billing", "<x>": "\"quoted\""}, "audio": true,
            "utterances": [{"speaker": "agent", "start": 0.5, "end": 3.0, "text": "hello"}]
        }))
        .unwrap()
    }

    #[test]
    fn every_field_is_a_form_with_the_session_csrf_and_names_are_escaped() {
        let html = content("acme", "tok", &call(), None, None).into_string();
        assert_eq!(
            html.matches("name=\"csrf\" value=\"tok\"").count(),
            3,
            "{html}"
        );
        assert!(html.contains("action=\"/console/acme/calls/main/t1/metadata\""));
        assert!(
            html.contains("&lt;x&gt;") && !html.contains("<x>"),
            "{html}"
        );
        assert!(html.contains("src=\"/console/acme/calls/main/t1/audio\""));
        assert!(html.contains("No phrase of the folder"));
    }

    #[test]
    fn a_refused_form_keeps_what_was_typed_with_the_reason() {
        let refused = Refused {
            field: "tId",
            value: "x",
            message: "reserved",
        };
        let html = content("acme", "tok", &call(), None, Some(&refused)).into_string();
        assert!(html.contains("role=\"alert\">tId: reserved"), "{html}");
        assert!(
            html.contains("id=\"new-field\" type=\"text\" name=\"field\" value=\"tId\""),
            "{html}"
        );
    }

    #[test]
    fn the_scorecard_nests_as_the_application_does() {
        let card = json!({"billing": {"Sales": {"score": 2, "subcategories": {"Upsell": {"score": 1}}}},
                          "slow": {"failed": "over its budget"}});
        let html = content("acme", "t", &call(), card.as_object(), None).into_string();
        assert!(html.contains("<h3>billing</h3><ul class=\"scorecard\"><li><span class=\"category\">Sales</span>: <span class=\"score\">2</span><ul class=\"scorecard\"><li><span class=\"category\">Upsell</span>"), "{html}");
        assert!(html.contains("Not scored: over its budget"));
    }
}
