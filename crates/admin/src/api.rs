//! Shared pieces of the handlers: the page envelope, the text checks of typed bodies (each error names
//! its field), the changes an audit entry records, timestamps, and password hashing off the async
//! workers.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use common::ApiError;
use serde_json::{Map, Value};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaType, Type};
use utoipa::openapi::{Ref, RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// ISO 8601 in UTC with milliseconds, e.g. `2026-01-31T09:15:00.000Z`.
pub fn iso(at: DateTime<Utc>) -> String {
    common::time::rfc3339(at)
}

pub fn iso_opt(at: Option<DateTime<Utc>>) -> Value {
    at.map_or(Value::Null, |a| Value::String(iso(a)))
}

/// The page envelope: `items`, the `limit` applied and `next_cursor` (null on the last page). Each item
/// keeps its record's order of fields.
#[derive(serde::Serialize)]
pub struct Page<V> {
    items: Vec<V>,
    limit: i64,
    next_cursor: Option<String>,
}

impl<V: ToSchema> PartialSchema for Page<V> {
    fn schema() -> RefOr<Schema> {
        let next_cursor = ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
            .description(Some(
                "Pass as `cursor` for the next page; null on the last page",
            ));
        let mut limit = crate::schema::integer(None, None, None, false);
        limit.description = Some("The limit applied".into());
        ObjectBuilder::new()
            .property(
                "items",
                ArrayBuilder::new().items(Ref::from_schema_name(V::name())),
            )
            .property("limit", limit)
            .property("next_cursor", next_cursor)
            .required("items")
            .required("limit")
            .required("next_cursor")
            .into()
    }
}

/// Named for its items: `UserPage` holds `UserRecord`s, `RolePage` `Role`s.
impl<V: ToSchema> ToSchema for Page<V> {
    fn name() -> Cow<'static, str> {
        format!("{}Page", V::name().trim_end_matches("Record")).into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((V::name().into(), V::schema()));
        V::schemas(schemas);
    }
}

/// The page of `rows` (up to `limit`, one more when there are more), each shown by `view`, with the
/// `cursor` of its last row when more follow.
pub fn page<'r, T, V>(
    rows: &'r mut Vec<T>,
    limit: i64,
    cursor: impl Fn(&T) -> String,
    view: impl Fn(&'r T) -> V,
) -> Page<V> {
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = if more { rows.last().map(cursor) } else { None };
    Page {
        items: rows.iter().map(view).collect(),
        limit,
        next_cursor,
    }
}

/// Hashes a password (argon2id) off the async workers.
pub async fn hash_password(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || common::secrets::hash_password(&password))
        .await
        .map_err(ApiError::internal)
}

/// A text field of a typed body: at most `max` characters, none of them a control character or a
/// bidirectional override (which make a name display as something else).
pub fn text(field: &str, value: &str, max: usize) -> Result<(), ApiError> {
    if value.chars().any(is_deceptive) {
        return Err(ApiError::field(
            field,
            format!("{field} must not contain control characters or bidirectional overrides"),
        ));
    }
    if value.chars().count() > max {
        return Err(ApiError::field(
            field,
            format!("{field} must be at most {max} characters"),
        ));
    }
    Ok(())
}

/// The items of a list field of a typed body: each non-empty, at most `max` characters, without control
/// characters or bidirectional overrides; errors name the item, e.g. `grant_types[2]`.
pub fn texts(field: &str, items: &[String], max: usize) -> Result<(), ApiError> {
    for (i, item) in items.iter().enumerate() {
        if item.is_empty() || item.chars().count() > max || item.chars().any(is_deceptive) {
            return Err(ApiError::field(
                format!("{field}[{i}]"),
                format!("{field}[{i}] must be a non-empty string of at most {max} characters"),
            ));
        }
    }
    Ok(())
}

/// Control characters (C0, DEL, C1) and the Unicode bidirectional embeddings, overrides and isolates.
pub fn is_deceptive(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Field-level differences between two flat JSON objects, for the audit log: `{field: {"from", "to"}}`
/// (only `to` on creation, only `from` on deletion).
pub fn changes(before: Option<&Map<String, Value>>, after: Option<&Map<String, Value>>) -> Value {
    let mut out = Map::new();
    let empty = Map::new();
    let b = before.unwrap_or(&empty);
    let a = after.unwrap_or(&empty);
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (from, to) = (b.get(key), a.get(key));
        if from == to {
            continue;
        }
        let mut change = Map::new();
        if before.is_some() {
            change.insert("from".into(), from.cloned().unwrap_or(Value::Null));
        }
        if after.is_some() {
            change.insert("to".into(), to.cloned().unwrap_or(Value::Null));
        }
        out.insert(key.clone(), Value::Object(change));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_list_only_what_differs() {
        let before = json!({"a": 1, "b": 2});
        let after = json!({"a": 1, "b": 3, "c": 4});
        let d = changes(before.as_object(), after.as_object());
        assert_eq!(
            d,
            json!({"b": {"from": 2, "to": 3}, "c": {"from": null, "to": 4}})
        );
        let created = changes(None, after.as_object());
        assert_eq!(created["a"], json!({"to": 1}));
    }
}
