//! The company's folders, by organization: each leads to its dashboard.

use maud::{html, Markup};

use crate::api::segment;

/// An organization and its folders, as the API lists them.
pub struct Organization {
    pub name: String,
    pub timezone: String,
    pub folders: Vec<String>,
}

pub fn content(company: &str, organizations: &[Organization]) -> Markup {
    html! {
        @if organizations.is_empty() {
            p { "The company has no organization yet." }
        }
        @for organization in organizations {
            section.organization aria-labelledby={ "org-" (organization.name) } {
                h2 id={ "org-" (organization.name) } { (organization.name) }
                p.muted { "Time zone " (organization.timezone) }
                @if organization.folders.is_empty() {
                    p { "No folder yet." }
                } @else {
                    ul.folders {
                        @for folder in &organization.folders {
                            li {
                                a href={ "/console/" (company) "/" (segment(&organization.name)) "/" (segment(folder)) "/" } {
                                    (folder)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
