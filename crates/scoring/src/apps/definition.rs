//! The body of `PUT /apps/<company>/<app>`, checked (docs/scoring.md, Applications): a tree of at most
//! four levels of categories whose leaves hold phrases, every phrase parsed by the phrase language. The
//! first problem is refused with its path (`categories.Sales.Upsell.phrases[1]: ...`) so an editor can
//! point at it. A checked definition prints as normalized JSON (keys sorted, no whitespace), whose digest
//! is the application's revision: the same tree sent with other key order or spacing is the same revision.

use std::collections::BTreeMap;

use phrases::{Phrase, Speaker};

use super::limits::Tally;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The deepest level of categories: the top-level categories are level 1.
pub const MAX_DEPTH: usize = 4;

/// Keys of an agent's object in `/appstats` beside its top-level categories.
pub const RESERVED_TOP_LEVEL: [&str; 2] = ["calls", "overall"];
/// The longest category or application name, in characters.
pub const MAX_NAME_CHARS: usize = 100;

/// A checked application definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// The top-level categories, by name.
    pub categories: BTreeMap<String, Category>,
}

/// A category: a leaf with its phrases, or a parent of subcategories (never both, never empty).
#[derive(Debug, Clone, PartialEq)]
pub enum Category {
    /// The phrases in the order given.
    Leaf(Vec<PhraseSpec>),
    Parent(BTreeMap<String, Category>),
}

/// One phrase of a leaf: its text as written (a leading `-` marks an exclude phrase), the speaker it is
/// restricted to, and the phrase parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct PhraseSpec {
    pub text: String,
    pub speaker: Option<Speaker>,
    pub phrase: Phrase,
}

/// Why a definition is refused: the path of the offending value, then what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DefinitionError {
    pub path: String,
    pub message: String,
}

fn refuse<T>(path: &str, message: impl Into<String>) -> Result<T, DefinitionError> {
    Err(DefinitionError {
        path: path.to_string(),
        message: message.into(),
    })
}

/// Whether `name` can name a category: 1 to 100 characters, no `.` (it joins the levels of a path), no
/// control or invisible formatting characters, no whitespace at either end.
pub fn valid_category_name(name: &str) -> bool {
    let chars = name.chars().count();
    (1..=MAX_NAME_CHARS).contains(&chars)
        && !name.chars().any(|c| c == '.' || invisible(c))
        && !name.starts_with(char::is_whitespace)
        && !name.ends_with(char::is_whitespace)
}

/// Control characters, and the zero-width and bidirectional marks that would make two different names
/// look the same.
pub fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

impl Definition {
    /// Checks a PUT body (already read as JSON, with no key given twice).
    pub fn parse(body: &Value) -> Result<Definition, DefinitionError> {
        let Some(object) = body.as_object() else {
            return refuse(
                "body",
                r#"must be an object {"categories": {NAME: CATEGORY}}"#,
            );
        };
        if let Some(other) = object.keys().find(|k| *k != "categories") {
            return refuse(other, "unknown field: the body has only \"categories\"");
        }
        let Some(categories) = object.get("categories") else {
            return refuse("categories", "required");
        };
        let mut tally = Tally::default();
        let categories = parse_children(categories, "categories", 1, &mut tally)?;
        Ok(Definition { categories })
    }

    /// The definition as normalized JSON: keys sorted, no whitespace, a phrase without speaker as its
    /// text.
    pub fn normalized(&self) -> String {
        let mut body = Map::new();
        body.insert("categories".into(), children_json(&self.categories));
        Value::Object(body).to_string()
    }

    /// The first 16 hex digits of the SHA-256 of the normalized JSON.
    pub fn revision(&self) -> String {
        revision_of(&self.normalized())
    }

    /// How many phrases the leaves hold together.
    pub fn phrase_count(&self) -> usize {
        fn count(categories: &BTreeMap<String, Category>) -> usize {
            categories
                .values()
                .map(|c| match c {
                    Category::Leaf(phrases) => phrases.len(),
                    Category::Parent(children) => count(children),
                })
                .sum()
        }
        count(&self.categories)
    }
}

/// The revision of a normalized definition.
pub fn revision_of(normalized: &str) -> String {
    Sha256::digest(normalized.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The categories of one level; `path` names the object holding them, `depth` is their level.
fn parse_children(
    value: &Value,
    path: &str,
    depth: usize,
    tally: &mut Tally,
) -> Result<BTreeMap<String, Category>, DefinitionError> {
    let Some(object) = value.as_object() else {
        return refuse(path, "must be an object of categories by name");
    };
    if object.is_empty() {
        return refuse(path, "at least one category");
    }
    let mut categories = BTreeMap::new();
    for (name, category) in object {
        if !valid_category_name(name) {
            return refuse(
                path,
                format!(
                    "invalid category name {name:?}: 1 to {MAX_NAME_CHARS} characters, no '.', no \
                     control characters, no whitespace at either end"
                ),
            );
        }
        if depth == 1 && RESERVED_TOP_LEVEL.contains(&name.as_str()) {
            return refuse(
                path,
                format!(
                    "{name:?} cannot name a top-level category: /appstats uses it for its own field"
                ),
            );
        }
        let category_path = format!("{path}.{name}");
        categories.insert(
            name.clone(),
            parse_category(category, &category_path, depth, tally)?,
        );
    }
    Ok(categories)
}

fn parse_category(
    value: &Value,
    path: &str,
    depth: usize,
    tally: &mut Tally,
) -> Result<Category, DefinitionError> {
    let shape = r#"must be {"phrases": [PHRASE, ...]} or {"subcategories": {NAME: CATEGORY}}"#;
    let Some(object) = value.as_object() else {
        return refuse(path, shape);
    };
    if let Some(other) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "phrases" | "subcategories"))
    {
        return refuse(
            path,
            format!("unknown field {other:?}: a category has \"phrases\" or \"subcategories\""),
        );
    }
    match (object.get("phrases"), object.get("subcategories")) {
        (Some(_), Some(_)) => refuse(
            path,
            "a category has phrases (a leaf) or subcategories, not both",
        ),
        (None, None) => refuse(path, shape),
        (None, Some(children)) => {
            if depth == MAX_DEPTH {
                return refuse(
                    &format!("{path}.subcategories"),
                    format!("at most {MAX_DEPTH} levels of categories"),
                );
            }
            let children = parse_children(children, path, depth + 1, tally)?;
            Ok(Category::Parent(children))
        }
        (Some(list), None) => {
            let list_path = format!("{path}.phrases");
            let Some(list) = list.as_array() else {
                return refuse(&list_path, "must be an array of phrases");
            };
            if list.is_empty() {
                return refuse(&list_path, "at least one phrase");
            }
            if let Err(limit) = tally.phrases(list.len()) {
                return refuse(&list_path, limit);
            }
            let specs = list
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let path = format!("{list_path}[{i}]");
                    let spec = parse_phrase(p, &path)?;
                    match tally.phrase(&spec.text, &spec.phrase) {
                        Ok(()) => Ok(spec),
                        Err(limit) => refuse(&path, limit),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Category::Leaf(specs))
        }
    }
}

fn parse_phrase(value: &Value, path: &str) -> Result<PhraseSpec, DefinitionError> {
    let (text, speaker) = match value {
        Value::String(text) => (text.clone(), None),
        Value::Object(object) => {
            if let Some(other) = object
                .keys()
                .find(|k| !matches!(k.as_str(), "text" | "speaker"))
            {
                return refuse(
                    path,
                    format!("unknown field {other:?}: a phrase has \"text\" and \"speaker\""),
                );
            }
            let text = match object.get("text") {
                Some(Value::String(text)) => text.clone(),
                Some(_) => return refuse(&format!("{path}.text"), "must be a string"),
                None => return refuse(&format!("{path}.text"), "required"),
            };
            let speaker = match object.get("speaker") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s == "agent" => Some(Speaker::Agent),
                Some(Value::String(s)) if s == "client" => Some(Speaker::Client),
                Some(_) => {
                    return refuse(
                        &format!("{path}.speaker"),
                        "must be \"agent\" or \"client\"",
                    )
                }
            };
            (text, speaker)
        }
        _ => {
            return refuse(
                path,
                r#"a phrase is a string or {"text": STRING, "speaker": "agent"|"client"}"#,
            )
        }
    };
    let phrase = Phrase::parse(&text).map_err(|e| DefinitionError {
        path: path.to_string(),
        message: e.to_string(),
    })?;
    Ok(PhraseSpec {
        text,
        speaker,
        phrase,
    })
}

fn children_json(categories: &BTreeMap<String, Category>) -> Value {
    let mut object = Map::new();
    for (name, category) in categories {
        let mut body = Map::new();
        match category {
            Category::Leaf(phrases) => {
                let list = phrases.iter().map(phrase_json).collect();
                body.insert("phrases".into(), Value::Array(list));
            }
            Category::Parent(children) => {
                body.insert("subcategories".into(), children_json(children));
            }
        }
        object.insert(name.clone(), Value::Object(body));
    }
    Value::Object(object)
}

fn phrase_json(spec: &PhraseSpec) -> Value {
    match spec.speaker {
        None => Value::String(spec.text.clone()),
        Some(speaker) => {
            // Inserted in key order, so the text is the same whether or not maps keep insertion order.
            let mut object = Map::new();
            object.insert(
                "speaker".into(),
                Value::String(speaker_name(speaker).into()),
            );
            object.insert("text".into(), Value::String(spec.text.clone()));
            Value::Object(object)
        }
    }
}

pub fn speaker_name(speaker: Speaker) -> &'static str {
    match speaker {
        Speaker::Agent => "agent",
        Speaker::Client => "client",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error_of(body: Value) -> String {
        Definition::parse(&body).unwrap_err().to_string()
    }

    fn nested(depth: usize) -> Value {
        let mut category = json!({"phrases": ["refund"]});
        for level in (1..depth).rev() {
            category = json!({"subcategories": {format!("L{}", level + 1): category}});
        }
        json!({"categories": {"L1": category}})
    }

    #[test]
    fn a_valid_tree_is_read_with_its_phrases_and_speakers() {
        let definition = Definition::parse(&json!({"categories": {
            "Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
            "Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "-no premium",
                {"text": "upgrade", "speaker": "client"}, {"text": "plan"}]}}}
        }}))
        .unwrap();
        let Category::Leaf(greeting) = &definition.categories["Greeting"] else {
            panic!("a leaf")
        };
        assert_eq!(greeting[1].text, "hello");
        assert_eq!(greeting[1].speaker, Some(Speaker::Agent));
        let Category::Parent(sales) = &definition.categories["Sales"] else {
            panic!("a parent")
        };
        let Category::Leaf(upsell) = &sales["Upsell"] else {
            panic!("a leaf")
        };
        assert!(upsell[1].phrase.is_exclude());
        assert_eq!(upsell[2].speaker, Some(Speaker::Client));
        assert_eq!(upsell[3].speaker, None);
        assert_eq!(definition.phrase_count(), 6);
        assert_eq!(
            definition.normalized(),
            r#"{"categories":{"Greeting":{"phrases":["thank* for calling",{"speaker":"agent","text":"hello"}]},"Sales":{"subcategories":{"Upsell":{"phrases":["premium","-no premium",{"speaker":"client","text":"upgrade"},"plan"]}}}}}"#
        );
    }

    #[test]
    fn the_revision_ignores_key_order_and_whitespace_but_not_content() {
        let a: Value = serde_json::from_str(
            r#"{"categories": {"B": {"phrases": ["x", {"text": "y", "speaker": "agent"}]}, "A": {"phrases": ["z"]}}}"#,
        )
        .unwrap();
        let b: Value = serde_json::from_str(
            "{ \"categories\" :{\n \"A\":{\"phrases\":[\"z\"]},\"B\":{\"phrases\":[\"x\",{\"speaker\":\"agent\",\"text\":\"y\"}]}}}",
        )
        .unwrap();
        let (a, b) = (
            Definition::parse(&a).unwrap(),
            Definition::parse(&b).unwrap(),
        );
        assert_eq!(a.normalized(), b.normalized());
        assert_eq!(a.revision(), b.revision());
        assert_eq!(a.revision().len(), 16);
        assert!(a.revision().bytes().all(|c| c.is_ascii_hexdigit()));
        // Digests of the normalized text, computed independently of the code above.
        assert_eq!(revision_of(""), "e3b0c44298fc1c14");
        let documented = Definition::parse(&json!({"categories": {
            "Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
            "Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "-no premium"]}}}}}))
        .unwrap();
        assert_eq!(documented.revision(), "eab26aee25d79af9");
        let c = Definition::parse(&json!({"categories": {"A": {"phrases": ["z"]},
            "B": {"phrases": ["x", {"text": "y", "speaker": "client"}]}}}))
        .unwrap();
        assert_ne!(a.revision(), c.revision(), "the speaker changed");
        // Phrase order is meaningful (it is the order of match_data).
        let d = Definition::parse(&json!({"categories": {"A": {"phrases": ["z"]},
            "B": {"phrases": [{"text": "y", "speaker": "agent"}, "x"]}}}))
        .unwrap();
        assert_ne!(a.revision(), d.revision());
        // A phrase object without speaker is the same as its text.
        let e = Definition::parse(&json!({"categories": {"A": {"phrases": [{"text": "z"}]},
            "B": {"phrases": ["x", {"text": "y", "speaker": "agent"}]}}}))
        .unwrap();
        assert_eq!(a.revision(), e.revision());
    }

    #[test]
    fn a_phrase_that_does_not_parse_is_refused_with_its_path() {
        assert_eq!(
            error_of(json!({"categories": {"Sales": {"subcategories": {"Upsell":
                {"phrases": ["premium", "premium &"]}}}}})),
            "categories.Sales.Upsell.phrases[1]: invalid phrase \"premium &\": nothing after '&' at \
             position 9"
        );
        assert_eq!(
            error_of(json!({"categories": {"A": {"phrases": [{"text": "a -b", "speaker": "agent"}]}}})),
            "categories.A.phrases[0]: invalid phrase \"a -b\": a word cannot start with '-' at position 2"
        );
    }

    #[test]
    fn malformed_trees_are_refused_with_their_path() {
        let cases = [
            (json!([]), "body: must be an object"),
            (json!({"apps": {}}), "apps: unknown field"),
            (json!({}), "categories: required"),
            (json!({"categories": []}), "categories: must be an object"),
            (
                json!({"categories": {}}),
                "categories: at least one category",
            ),
            (
                json!({"categories": {"A": {}}}),
                "categories.A: must be {\"phrases\"",
            ),
            (json!({"categories": {"A": "x"}}), "categories.A: must be"),
            (
                json!({"categories": {"A": {"phrases": ["x"], "subcategories": {"B": {"phrases": ["y"]}}}}}),
                "categories.A: a category has phrases (a leaf) or subcategories, not both",
            ),
            (
                json!({"categories": {"A": {"phrases": ["x"], "weight": 2}}}),
                "categories.A: unknown field \"weight\"",
            ),
            (
                json!({"categories": {"A": {"phrases": []}}}),
                "categories.A.phrases: at least one phrase",
            ),
            (
                json!({"categories": {"A": {"phrases": "x"}}}),
                "categories.A.phrases: must be an array",
            ),
            (
                json!({"categories": {"A": {"subcategories": {}}}}),
                "categories.A: at least one category",
            ),
            (
                json!({"categories": {"A": {"phrases": [3]}}}),
                "categories.A.phrases[0]: a phrase is a string",
            ),
            (
                json!({"categories": {"A": {"phrases": ["x", {"text": "y", "speaker": "both"}]}}}),
                "categories.A.phrases[1].speaker: must be \"agent\" or \"client\"",
            ),
            (
                json!({"categories": {"A": {"phrases": [{"speaker": "agent"}]}}}),
                "categories.A.phrases[0].text: required",
            ),
            (
                json!({"categories": {"A": {"phrases": [{"text": "y", "weight": 1}]}}}),
                "categories.A.phrases[0]: unknown field \"weight\"",
            ),
            (
                json!({"categories": {"A": {"subcategories": {"b.c": {"phrases": ["x"]}}}}}),
                "categories.A: invalid category name \"b.c\"",
            ),
            (
                json!({"categories": {"": {"phrases": ["x"]}}}),
                "categories: invalid category name \"\"",
            ),
            (
                json!({"categories": {"a\u{202e}b": {"phrases": ["x"]}}}),
                "categories: invalid category name",
            ),
            (
                json!({"categories": {" A": {"phrases": ["x"]}}}),
                "categories: invalid category name",
            ),
            (
                json!({"categories": {"x".repeat(101): {"phrases": ["x"]}}}),
                "categories: invalid category name",
            ),
        ];
        for (body, expected) in cases {
            let error = error_of(body.clone());
            assert!(error.starts_with(expected), "{body}: {error}");
        }
        assert!(
            Definition::parse(&json!({"categories": {"x".repeat(100): {"phrases": ["x"]}}}))
                .is_ok()
        );
        assert!(Definition::parse(
            &json!({"categories": {"Ärger über Preise": {"phrases": ["x"]}}})
        )
        .is_ok());
    }

    #[test]
    fn four_levels_at_most() {
        assert!(Definition::parse(&nested(4)).is_ok());
        assert_eq!(
            error_of(nested(5)),
            "categories.L1.L2.L3.L4.subcategories: at most 4 levels of categories"
        );
    }

    #[test]
    fn an_application_holds_a_bounded_number_of_phrases() {
        let many: Vec<Value> = (0..crate::apps::limits::MAX_PHRASES)
            .map(|i| json!(format!("w{i}")))
            .collect();
        let body = json!({"categories": {"A": {"phrases": many}, "B": {"phrases": ["one"]}}});
        assert_eq!(
            error_of(body),
            format!(
                "categories.B.phrases: an application holds at most {} phrases",
                crate::apps::limits::MAX_PHRASES
            )
        );
    }

    #[test]
    fn top_level_names_of_appstats_fields_are_refused() {
        let body = json!({"categories": {"overall": {"phrases": ["a"]}}});
        let e = Definition::parse(&body).unwrap_err().to_string();
        assert!(
            e.contains("\"overall\" cannot name a top-level category"),
            "{e}"
        );
        let nested = json!({"categories": {"A": {"subcategories": {"calls": {"phrases": ["a"]}}}}});
        assert!(
            Definition::parse(&nested).is_ok(),
            "only the top level shares keys with those fields"
        );
    }
}
