//! The applications pages: the company's applications with a form to start a new one, and an
//! application's editor. The editor lays the category tree out flat: one fieldset per leaf, its path
//! (levels joined by `.`, which no category name holds) and its phrases one per line, `agent:` or
//! `client:` in front of a phrase of one speaker. `definition` turns the form back into the API's tree.

use maud::{html, Markup};
use serde_json::{json, Map, Value};

use crate::api::segment;

/// A leaf of the tree as the editor shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Leaf {
    pub path: String,
    /// One phrase per line.
    pub phrases: String,
}

/// The leaves of an application's categories, in the API's order, each with its phrases as lines.
pub fn leaves(categories: &Map<String, Value>) -> Vec<Leaf> {
    let mut out = Vec::new();
    walk("", categories, &mut out);
    out
}

fn walk(prefix: &str, categories: &Map<String, Value>, out: &mut Vec<Leaf>) {
    for (name, category) in categories {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        if let Some(sub) = category["subcategories"].as_object() {
            walk(&path, sub, out);
            continue;
        }
        let lines: Vec<String> = category["phrases"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|phrase| match phrase {
                Value::String(text) => text.clone(),
                other => match other["speaker"].as_str() {
                    Some(speaker) => format!("{speaker}: {}", other["text"].as_str().unwrap_or("")),
                    None => other["text"].as_str().unwrap_or("").to_string(),
                },
            })
            .collect();
        out.push(Leaf {
            path,
            phrases: lines.join("\n"),
        });
    }
}

/// A phrase line as the API takes it: its text, or `{"text", "speaker"}` after `agent:` or `client:`.
pub fn phrase(line: &str) -> Value {
    for speaker in ["agent", "client"] {
        if let Some(rest) = line
            .strip_prefix(speaker)
            .and_then(|r| r.trim_start().strip_prefix(':'))
        {
            return json!({"text": rest.trim(), "speaker": speaker});
        }
    }
    Value::String(line.to_string())
}

/// The text of a line the phrase parser reads (without its speaker).
pub fn phrase_text(line: &str) -> String {
    match phrase(line) {
        Value::String(text) => text,
        object => object["text"].as_str().unwrap_or_default().to_string(),
    }
}

/// The lines of a leaf's phrases that hold one.
pub fn lines(phrases: &str) -> impl Iterator<Item = &str> {
    phrases.lines().map(str::trim).filter(|l| !l.is_empty())
}

/// The API's body for the leaves of the form (blank ones left out). A path that is a leaf and a parent
/// at once gets both keys, which the API refuses with that category's path.
pub fn definition(leaves: &[Leaf]) -> Value {
    let mut categories = Map::new();
    for leaf in leaves {
        if leaf.path.trim().is_empty() && lines(&leaf.phrases).next().is_none() {
            continue;
        }
        let levels: Vec<&str> = leaf.path.split('.').map(str::trim).collect();
        let mut here = &mut categories;
        for (depth, level) in levels.iter().enumerate() {
            let node = here
                .entry(level.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            let node = node.as_object_mut().expect("categories are objects");
            if depth + 1 == levels.len() {
                node.insert(
                    "phrases".into(),
                    Value::Array(lines(&leaf.phrases).map(phrase).collect()),
                );
                break;
            }
            here = node
                .entry("subcategories")
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("subcategories are objects");
        }
    }
    json!({ "categories": categories })
}

/// The applications page.
pub fn list(company: &str, apps: &[String]) -> Markup {
    html! {
        @if apps.is_empty() {
            p.notice { "This company has no application yet." }
        } @else {
            ul.apps {
                @for app in apps {
                    li { a href={ "/console/" (company) "/apps/" (segment(app)) } { (app) } }
                }
            }
        }
        h2 { "New application" }
        form.start method="get" action={ "/console/" (company) "/apps" } {
            label for="name" { "Name" }
            input id="name" type="text" name="name" required maxlength="100";
            button type="submit" { "Open the editor" }
        }
    }
}

/// How far the rescoring of the application's folders is, as the API counts it.
pub struct Rescoring {
    pub calls: i64,
    pub scored: i64,
}

/// The editor: the leaves in a form, an empty one to add a category; the API's refusal of a save on
/// top; each phrase box checked as it is typed by the console's script.
pub fn editor(
    company: &str,
    app: &str,
    csrf: &str,
    leaves: &[Leaf],
    refused: Option<&str>,
    rescoring: Option<&Rescoring>,
) -> Markup {
    let action = format!("/console/{company}/apps/{}", segment(app));
    let blank = Leaf::default();
    html! {
        @if let Some(message) = refused {
            p.error role="alert" { "Not saved: " (message) }
        }
        @if let Some(progress) = rescoring {
            div.rescoring data-source={ (action) "/rescoring" } {
                label for="rescoring" { "Calls scored with this revision" }
                progress id="rescoring" max=(progress.calls.max(1)) value=(progress.scored) {}
                span.count role="status" { (progress.scored) " of " (progress.calls) }
            }
        }
        p.muted {
            "Each category: its path (levels joined by “.”) and its phrases, one per line. "
            "Write “agent:” or “client:” before a phrase of one speaker, “-” before an exclude phrase."
        }
        form.editor method="post" action=(action) data-check={ "/console/" (company) "/phrases" } {
            input type="hidden" name="csrf" value=(csrf);
            @for (i, leaf) in leaves.iter().chain(std::iter::once(&blank)).enumerate() {
                fieldset.leaf {
                    legend { @if leaf.path.is_empty() { "New category" } @else { (leaf.path) } }
                    label for={ "path-" (i) } { "Category path" }
                    input id={ "path-" (i) } type="text" name="path" value=(leaf.path);
                    label for={ "phrases-" (i) } { "Phrases, one per line" }
                    textarea.phrases id={ "phrases-" (i) } name="phrases"
                        rows=((lines(&leaf.phrases).count() + 1).clamp(2, 12))
                        aria-describedby={ "problems-" (i) } { (leaf.phrases) }
                    ul.problems id={ "problems-" (i) } aria-live="polite" {}
                }
            }
            button type="submit" { "Save" }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> Value {
        json!({"Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
               "Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "-no premium"]},
                                           "Refund": {"phrases": [{"text": "refund", "speaker": "client"}]}}}})
    }

    #[test]
    fn the_tree_goes_flat_and_comes_back_as_it_was() {
        let categories = app();
        let flat = leaves(categories.as_object().unwrap());
        assert_eq!(
            flat,
            vec![
                Leaf {
                    path: "Greeting".into(),
                    phrases: "thank* for calling\nagent: hello".into()
                },
                Leaf {
                    path: "Sales.Refund".into(),
                    phrases: "client: refund".into()
                },
                Leaf {
                    path: "Sales.Upsell".into(),
                    phrases: "premium\n-no premium".into()
                },
            ]
        );
        let mut with_blank = flat.clone();
        with_blank.push(Leaf::default());
        assert_eq!(definition(&with_blank), json!({ "categories": categories }));
    }

    #[test]
    fn a_line_keeps_its_speaker_apart_from_its_text() {
        assert_eq!(
            phrase("agent : hi there"),
            json!({"text": "hi there", "speaker": "agent"})
        );
        assert_eq!(phrase("agents hi"), json!("agents hi"));
        assert_eq!(phrase_text("client: refund &"), "refund &");
        assert_eq!(lines(" a \n\n b\n").collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn the_editor_has_a_blank_category_and_escapes_what_it_shows() {
        let leaves = vec![Leaf {
            path: "<b>".into(),
            phrases: "a </textarea> b".into(),
        }];
        let html = editor("acme", "sales q4", "tok", &leaves, Some("bad <x>"), None).into_string();
        assert!(
            html.contains("action=\"/console/acme/apps/sales%20q4\""),
            "{html}"
        );
        assert!(html.contains("a &lt;/textarea&gt; b"), "{html}");
        assert!(html.contains("Not saved: bad &lt;x&gt;"));
        assert!(html.contains("id=\"path-1\""), "a blank category to add");
    }
}
