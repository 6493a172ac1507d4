//! The request schemas of the OpenAPI document say what the API enforces, neither more nor less: an
//! instance built from a schema alone (its required fields, or all of them) is accepted, and breaking
//! any documented `maxLength`, `enum` or `additionalProperties: false` is refused with 400 naming the
//! field. A client generated from the document therefore never sends a request the API refuses for
//! reasons the document does not give.

use serde_json::{json, Map, Value};

use crate::support::*;

/// Builds instances of the document's schemas. Patterned strings, e-mail addresses and URIs take the
/// schema's `example` (a pattern cannot be satisfied blindly); identities (`username`, `name`) get a
/// counter appended so that every instance is new.
struct Instances<'a> {
    doc: &'a Value,
    n: usize,
}

impl Instances<'_> {
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        match schema["$ref"].as_str() {
            Some(r) => {
                let name = r.trim_start_matches("#/components/schemas/");
                &self.doc["components"]["schemas"][name]
            }
            None => schema,
        }
    }

    /// An instance of `schema`: with `all`, every documented property, else only the required ones.
    fn of(&mut self, schema: &Value, all: bool) -> Value {
        let schema = self.resolve(schema).clone();
        if let Some(example) = schema.get("example") {
            return example.clone();
        }
        if let Some(values) = schema["enum"].as_array() {
            return values[0].clone();
        }
        if let Some(choices) = schema["oneOf"].as_array() {
            return self.of(&choices[0], all);
        }
        match schema["type"].as_str() {
            Some("string") => {
                assert!(
                    schema.get("pattern").is_none() && schema.get("format").is_none(),
                    "a patterned or formatted string needs an example: {schema}"
                );
                let min = schema["minLength"].as_u64().unwrap_or(1).max(1) as usize;
                json!("a".repeat(min))
            }
            Some("integer") => json!(schema["minimum"].as_i64().unwrap_or(0)),
            Some("boolean") => json!(false),
            Some("array") => {
                let count = schema["minItems"].as_u64().unwrap_or(0).max(u64::from(all)) as usize;
                Value::Array((0..count).map(|_| self.of(&schema["items"], all)).collect())
            }
            Some("object") | None => {
                let required: Vec<&str> = schema["required"]
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut out = Map::new();
                if let Some(properties) = schema["properties"].as_object() {
                    for (key, property) in properties {
                        if all || required.contains(&key.as_str()) {
                            out.insert(key.clone(), self.of(property, all));
                        }
                    }
                }
                Value::Object(out)
            }
            other => panic!("no instance for type {other:?}"),
        }
    }

    /// A fresh instance of the named request schema.
    fn fresh(&mut self, name: &str, all: bool) -> Value {
        self.n += 1;
        let schema = self.doc["components"]["schemas"][name].clone();
        let mut body = self.of(&schema, all);
        let n = self.n;
        for key in ["username", "name"] {
            if let Some(Value::String(s)) = body.get_mut(key) {
                s.push_str(&format!("-{n}"));
            }
        }
        if name.starts_with("Client") {
            // Every client is new anyway; its name has no pattern.
            body["name"] = json!(format!("client {n}"));
        }
        body
    }
}

/// The properties of a schema with a documented limit, and a value breaking it.
fn violations(doc: &Value, schema: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if schema["additionalProperties"] == json!(false) {
        out.push(("unexpected_field".to_string(), json!(1)));
    }
    for (key, property) in schema["properties"].as_object().into_iter().flatten() {
        let property = match property["$ref"].as_str() {
            Some(r) => &doc["components"]["schemas"][r.trim_start_matches("#/components/schemas/")],
            None => property,
        };
        if let Some(max) = property["maxLength"].as_u64() {
            out.push((key.clone(), json!("a".repeat(max as usize + 1))));
        }
        if property["enum"].is_array() {
            out.push((key.clone(), json!("not one of the documented values")));
        }
        if let Some(max) = property["maximum"].as_i64() {
            out.push((key.clone(), json!(max + 1)));
        }
        if let Some(min) = property["minimum"].as_i64() {
            out.push((key.clone(), json!(min - 1)));
        }
    }
    out
}

async fn request_schemas_say_what_the_api_enforces(backend: Backend) {
    let w = World::new(backend).await;
    // The document the service serves (the openapi tests check it is this one).
    let doc: Value = serde_json::from_str(admin::OPENAPI).unwrap();
    let mut make = Instances { doc: &doc, n: 0 };
    for collection in ["/users", "/roles", "/clients"] {
        // The schema the document gives for creating one.
        let reference = doc["paths"][format!("/admin/v1{collection}")]["post"]["requestBody"]
            ["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap_or_else(|| panic!("POST {collection} documents its body"))
            .to_string();
        let schema = reference.trim_start_matches("#/components/schemas/");
        for all in [false, true] {
            let body = make.fresh(schema, all);
            let created = w.post(collection, body.clone()).await;
            assert_eq!(
                created.status,
                201,
                "{schema} instance built from the document ({}) was refused: {body} -> {:?}",
                if all {
                    "every field"
                } else {
                    "required fields"
                },
                created.body
            );
        }
        let definition = &doc["components"]["schemas"][schema];
        let broken = violations(&doc, definition);
        assert!(!broken.is_empty(), "{schema} documents limits");
        for (field, value) in broken {
            let mut body = make.fresh(schema, true);
            body[field.as_str()] = value.clone();
            let refused = w.post(collection, body).await;
            assert_eq!(
                (refused.status, refused.field()),
                (400, field.as_str()),
                "{schema}.{field} = {value} breaks the document but was not refused as such: {:?}",
                refused.body
            );
        }
    }
}

common::backend_tests!(request_schemas_say_what_the_api_enforces);
