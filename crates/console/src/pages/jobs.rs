//! The jobs page: the company's latest transcriptions with their progress and the deletions under way,
//! as `/jobs` answers them, each a table row.

use maud::{html, Markup};
use serde::Deserialize;

use crate::api::segment;

/// A transcription request as `/jobs` lists it.
#[derive(Debug, Deserialize)]
pub struct Transcription {
    pub requestid: String,
    pub status: String,
    #[serde(default)]
    pub error: Option<String>,
    pub filename: String,
    #[serde(default)]
    pub organization: Option<String>,
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(rename = "tId", default)]
    pub call: Option<String>,
    pub created: String,
    pub updated: String,
}

/// Something being deleted.
#[derive(Debug, Deserialize)]
pub struct Deletion {
    #[serde(default)]
    pub organization: Option<String>,
    #[serde(default)]
    pub folder: Option<String>,
    pub status: String,
}

#[derive(Debug, Deserialize)]
pub struct Jobs {
    pub transcriptions: Vec<Transcription>,
    pub deletions: Vec<Deletion>,
}

pub fn content(company: &str, jobs: &Jobs) -> Markup {
    html! {
        section aria-labelledby="deletions-title" {
            h2 id="deletions-title" { "Deletions" }
            @if jobs.deletions.is_empty() {
                p.muted { "Nothing is being deleted." }
            } @else {
                div.figures {
                    table.deletions {
                        thead { tr { th scope="col" { "What" } th scope="col" { "Progress" } } }
                        tbody {
                            @for deletion in &jobs.deletions {
                                tr {
                                    th scope="row" { (what(company, deletion)) }
                                    td { (deletion.status) }
                                }
                            }
                        }
                    }
                }
            }
        }
        section aria-labelledby="transcriptions-title" {
            h2 id="transcriptions-title" { "Transcriptions" }
            @if jobs.transcriptions.is_empty() {
                p.muted { "No recording was sent for transcription." }
            } @else {
                div.figures {
                    table.transcriptions {
                        thead { tr {
                            th scope="col" { "File" } th scope="col" { "Status" } th scope="col" { "Folder" }
                            th scope="col" { "Sent" } th scope="col" { "Last change" }
                        } }
                        tbody {
                            @for t in &jobs.transcriptions {
                                tr {
                                    th scope="row" {
                                        @match (&t.organization, &t.call) {
                                            (Some(organization), Some(call)) if t.status == "done" => {
                                                a href={ "/console/" (company) "/calls/" (segment(organization)) "/" (segment(call)) } { (t.filename) }
                                            }
                                            _ => { (t.filename) }
                                        }
                                    }
                                    td.status {
                                        (t.status)
                                        @if let Some(error) = &t.error { ": " (error) }
                                    }
                                    td { @if let (Some(o), Some(f)) = (&t.organization, &t.folder) { (o) " / " (f) } }
                                    td { time { (t.created) } }
                                    td { time { (t.updated) } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn what(company: &str, deletion: &Deletion) -> String {
    match (&deletion.organization, &deletion.folder) {
        (Some(organization), Some(folder)) => format!("Folder {organization} / {folder}"),
        (Some(organization), None) => format!("Organization {organization}"),
        _ => format!("Company {company}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_job_is_a_row_and_a_done_upload_links_to_its_call() {
        let jobs: Jobs = serde_json::from_value(json!({
            "transcriptions": [
                {"requestid": "r1", "status": "done", "filename": "a.wav", "organization": "main",
                 "folder": "calls", "tId": "t1", "created": "c", "updated": "u"},
                {"requestid": "r2", "status": "failed", "error": "not <audio>", "filename": "b.wav",
                 "created": "c", "updated": "u"}],
            "deletions": [{"organization": "main", "folder": "old", "status": "deleting (40%)"}]
        }))
        .unwrap();
        let html = content("acme", &jobs).into_string();
        assert!(
            html.contains("href=\"/console/acme/calls/main/t1\""),
            "{html}"
        );
        assert!(html.contains("failed: not &lt;audio&gt;"), "{html}");
        assert!(
            html.contains("Folder main / old</th><td>deleting (40%)"),
            "{html}"
        );
    }
}
