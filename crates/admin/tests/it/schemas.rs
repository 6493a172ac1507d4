//! The request schemas of the generated OpenAPI document say what the API enforces, neither more nor
//! less. An instance built from a schema alone (its required fields, or all of them; values within the
//! documented lengths, patterns, enums and bounds) is accepted; and every documented `maxLength`,
//! `minLength`, `pattern`, `enum`, bound, `minItems`, `uniqueItems` and `additionalProperties: false`, at
//! any depth, is enforced: a value breaking it alone is refused with 400 naming that field's path. A client
//! generated from the document therefore never sends a request the API refuses for reasons the document
//! does not give, nor finds a documented rule the API does not keep.

use regex::Regex;
use serde_json::{json, Map, Value};

use crate::support::*;

/// One step of a field path: an object key or an array index.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// A path as the API names it: `roles.primary_role.role`, `redirect_uris[0]`.
fn path_text(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Reads the document's schemas.
struct Schemas<'a> {
    doc: &'a Value,
}

impl<'a> Schemas<'a> {
    /// The schema itself: references followed, and of a nullable union (`oneOf` with `null`) the
    /// non-null branch. Other unions (`oneOf` of several shapes) are kept.
    fn resolve(&self, schema: &'a Value) -> &'a Value {
        if let Some(r) = schema["$ref"].as_str() {
            let pointer = r.trim_start_matches('#');
            return self.resolve(self.doc.pointer(pointer).unwrap_or_else(|| panic!("{r}")));
        }
        if let Some(choices) = schema["oneOf"].as_array() {
            let non_null: Vec<&Value> = choices.iter().filter(|c| c["type"] != "null").collect();
            if non_null.len() == 1 && choices.len() == 2 {
                return self.resolve(non_null[0]);
            }
        }
        schema
    }

    /// The schema's type, leaving out `null` of a nullable type.
    fn kind(schema: &Value) -> Option<&str> {
        match &schema["type"] {
            Value::String(t) => Some(t),
            Value::Array(types) => types
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null"),
            _ => None,
        }
    }

    /// A valid instance: with `all`, every documented property, else only the required ones. Strings
    /// take the schema's example, else as many `a` as they need; either must match the pattern.
    fn instance(&self, schema: &'a Value, all: bool) -> Value {
        let schema = self.resolve(schema);
        let example = schema["examples"].get(0).or(schema.get("example"));
        if let Some(pattern) = schema["pattern"].as_str() {
            let min = schema["minLength"].as_u64().unwrap_or(1).max(1) as usize;
            let text = example.map_or("a".repeat(min), |e| e.as_str().unwrap().to_string());
            assert!(
                Regex::new(pattern).unwrap().is_match(&text),
                "the instance {text:?} does not match its own pattern {pattern}"
            );
        }
        if let Some(example) = example {
            return example.clone();
        }
        if let Some(values) = schema["enum"].as_array() {
            return values[0].clone();
        }
        if let Some(choices) = schema["oneOf"].as_array() {
            return self.instance(&choices[0], all);
        }
        match Self::kind(schema) {
            Some("string") => {
                assert!(
                    schema.get("format").is_none(),
                    "a formatted string needs an example: {schema}"
                );
                let min = schema["minLength"].as_u64().unwrap_or(1).max(1) as usize;
                json!("a".repeat(min))
            }
            Some("integer") => json!(schema["minimum"].as_i64().unwrap_or(0)),
            Some("boolean") => json!(false),
            Some("array") => {
                let count = schema["minItems"].as_u64().unwrap_or(0).max(u64::from(all)) as usize;
                Value::Array(
                    (0..count)
                        .map(|_| self.instance(&schema["items"], all))
                        .collect(),
                )
            }
            Some("object") | None => {
                let required = Self::required(schema);
                let mut out = Map::new();
                for (key, property) in schema["properties"].as_object().into_iter().flatten() {
                    if all || required.contains(&key.as_str()) {
                        out.insert(key.clone(), self.instance(property, all));
                    }
                }
                Value::Object(out)
            }
            other => panic!("no instance for type {other:?}"),
        }
    }

    fn required(schema: &Value) -> Vec<&str> {
        schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// Every documented constraint under `schema` at `path`, with a value breaking it (and where to put
    /// that value). Unions of several shapes are not entered: a value failing one branch may fit another.
    fn violations(&self, schema: &'a Value, path: Vec<Step>, out: &mut Vec<(Vec<Step>, Value)>) {
        let schema = self.resolve(schema);
        if let Some(max) = schema["maxLength"].as_u64() {
            out.push((path.clone(), json!("a".repeat(max as usize + 1))));
        }
        if let Some(min) = schema["minLength"].as_u64().filter(|m| *m > 0) {
            out.push((path.clone(), json!("a".repeat(min as usize - 1))));
        }
        if let Some(pattern) = schema["pattern"].as_str() {
            let re = Regex::new(pattern).unwrap();
            let breaking = [
                " leading space",
                "trailing space ",
                "has space",
                "   ",
                "!",
                "a%b",
                "a\u{1}b",
                "a\u{202e}b",
            ]
            .into_iter()
            .find(|candidate| !re.is_match(candidate))
            .unwrap_or_else(|| panic!("no value breaks {pattern}"));
            out.push((path.clone(), json!(breaking)));
        }
        if schema["enum"].is_array() {
            out.push((path.clone(), json!("not one of the documented values")));
        }
        if let Some(max) = schema["maximum"].as_i64() {
            out.push((path.clone(), json!(max + 1)));
        }
        if let Some(min) = schema["minimum"].as_i64() {
            out.push((path.clone(), json!(min - 1)));
        }
        match Self::kind(schema) {
            Some("array") => {
                if let Some(min) = schema["minItems"].as_u64().filter(|m| *m > 0) {
                    let items: Vec<Value> = (1..min)
                        .map(|_| self.instance(&schema["items"], false))
                        .collect();
                    out.push((path.clone(), Value::Array(items)));
                }
                if schema["uniqueItems"] == json!(true) {
                    let item = self.instance(&schema["items"], false);
                    out.push((path.clone(), json!([item.clone(), item])));
                }
                let mut item_path = path.clone();
                item_path.push(Step::Index(0));
                if self.resolve(&schema["items"])["oneOf"].is_null() {
                    self.violations(&schema["items"], item_path, out);
                }
            }
            Some("object") | None if schema["properties"].is_object() => {
                if schema["additionalProperties"] == json!(false) {
                    let mut extra = path.clone();
                    extra.push(Step::Key("unexpected_field".into()));
                    out.push((extra, json!(1)));
                }
                for (key, property) in schema["properties"].as_object().unwrap() {
                    let mut inner = path.clone();
                    inner.push(Step::Key(key.clone()));
                    self.violations(property, inner, out);
                }
            }
            _ => {}
        }
    }

    /// Puts `value` at `path` of `body` (an instance of `schema`), creating what is missing on the way
    /// as minimal instances of the documented schemas.
    fn set(&self, body: &mut Value, schema: &'a Value, path: &[Step], value: Value) {
        let schema = self.resolve(schema);
        let Some((first, rest)) = path.split_first() else {
            *body = value;
            return;
        };
        match first {
            Step::Key(key) => {
                let inner = &schema["properties"][key.as_str()];
                let map = body.as_object_mut().expect("an object on the way");
                if rest.is_empty() {
                    map.insert(key.clone(), value);
                    return;
                }
                let slot = map
                    .entry(key.clone())
                    .or_insert_with(|| self.instance(inner, false));
                self.set(slot, inner, rest, value);
            }
            Step::Index(i) => {
                let items = &schema["items"];
                let list = body.as_array_mut().expect("an array on the way");
                while list.len() <= *i {
                    list.push(self.instance(items, false));
                }
                self.set(&mut list[*i], items, rest, value);
            }
        }
    }
}

/// Fresh identities, so that every instance creates something new.
fn freshen(body: &mut Value, schema_name: &str, n: usize) {
    for key in ["username", "name"] {
        if let Some(Value::String(s)) = body.get_mut(key) {
            s.push_str(&format!("-{n}"));
        }
    }
    if schema_name.starts_with("Client") {
        body["name"] = json!(format!("client {n}"));
    }
}

async fn request_schemas_say_what_the_api_enforces(backend: Backend) {
    let w = World::new(backend).await;
    // The generated document, which the openapi tests show is the one served.
    let doc = serde_json::to_value(admin::openapi()).unwrap();
    let schemas = Schemas { doc: &doc };
    let mut n = 0;
    for collection in ["/users", "/roles", "/clients"] {
        // The schema the document gives for creating one.
        let body_schema = &doc["paths"][format!("/admin/v1{collection}")]["post"]["requestBody"]
            ["content"]["application/json"]["schema"];
        let name = body_schema["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("POST {collection} documents its body"))
            .trim_start_matches("#/components/schemas/")
            .to_string();
        for all in [false, true] {
            n += 1;
            let mut body = schemas.instance(body_schema, all);
            freshen(&mut body, &name, n);
            let created = w.post(collection, body.clone()).await;
            assert_eq!(
                created.status,
                201,
                "{name} instance built from the document ({}) was refused: {body} -> {:?}",
                if all {
                    "every field"
                } else {
                    "required fields"
                },
                created.body
            );
        }

        let mut broken = Vec::new();
        schemas.violations(body_schema, Vec::new(), &mut broken);
        assert!(broken.len() >= 5, "{name} documents its limits: {broken:?}");
        for (path, value) in broken {
            n += 1;
            let mut body = schemas.instance(body_schema, false);
            freshen(&mut body, &name, n);
            schemas.set(&mut body, body_schema, &path, value.clone());
            let field = path_text(&path);
            let refused = w.post(collection, body.clone()).await;
            let named =
                refused.field() == field || refused.field().starts_with(&format!("{field}["));
            assert!(
                refused.status == 400 && named,
                "{name}.{field} = {value} breaks the document but was not refused naming it: {body} -> {} {:?}",
                refused.status,
                refused.body
            );
        }
    }
}

common::backend_tests!(request_schemas_say_what_the_api_enforces);
