//! Shared pieces of the handlers: query parameters, cursors and the page envelope, ETags and `If-Match`,
//! the text checks of typed bodies (each error names its field), timestamps, and password hashing off the
//! async workers.

use std::collections::HashMap;

use actix_web::http::header;
use actix_web::HttpRequest;
use chrono::{DateTime, Utc};
use common::{ApiError, ErrorCode};
use serde_json::{Map, Value};

pub const DEFAULT_LIMIT: i64 = 25;
pub const MAX_LIMIT: i64 = 100;

/// ISO 8601 in UTC with milliseconds, e.g. `2026-01-31T09:15:00.000Z`.
pub fn iso(at: DateTime<Utc>) -> String {
    common::time::rfc3339(at)
}

pub fn iso_opt(at: Option<DateTime<Utc>>) -> Value {
    at.map_or(Value::Null, |a| Value::String(iso(a)))
}

/// The query parameters of a request; each may appear once, and only the names an endpoint knows.
pub struct Query(HashMap<String, String>);

impl Query {
    pub fn parse(req: &HttpRequest, known: &[&str]) -> Result<Query, ApiError> {
        let mut map = HashMap::new();
        for (key, value) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
            if !known.contains(&key.as_ref()) {
                return Err(ApiError::field(
                    key.as_ref(),
                    format!(
                        "unknown query parameter {key}; this endpoint accepts {}",
                        known.join(", ")
                    ),
                ));
            }
            if map.insert(key.to_string(), value.to_string()).is_some() {
                return Err(ApiError::field(
                    key.as_ref(),
                    format!("query parameter {key} is given more than once"),
                ));
            }
        }
        Ok(Query(map))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// `limit`: 1 to 100, default 25.
    /// The `status` filter of user and role listings: ACTIVE or INACTIVE, in any case.
    pub fn status_filter(&self) -> Result<Option<String>, ApiError> {
        use directory::{STATUS_ACTIVE, STATUS_INACTIVE};
        match self.get("status") {
            None => Ok(None),
            Some(s) => {
                let s = s.to_ascii_uppercase();
                if s != STATUS_ACTIVE && s != STATUS_INACTIVE {
                    return Err(ApiError::field(
                        "status",
                        format!("status must be {STATUS_ACTIVE} or {STATUS_INACTIVE}"),
                    ));
                }
                Ok(Some(s))
            }
        }
    }

    /// The `role` filter of user and role listings: a role name, never empty.
    pub fn role_filter(&self) -> Result<Option<String>, ApiError> {
        match self.get("role") {
            Some("") => Err(ApiError::field("role", "role must not be empty")),
            r => Ok(r.map(str::to_string)),
        }
    }

    pub fn limit(&self) -> Result<i64, ApiError> {
        let Some(text) = self.get("limit") else {
            return Ok(DEFAULT_LIMIT);
        };
        match text.parse::<i64>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            _ => Err(ApiError {
                code: ErrorCode::InvalidLimit,
                message: format!(
                    "limit must be an integer from 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}), got {text:?}"
                ),
                field: Some("limit".into()),
                retry_after: None,
            }),
        }
    }

    /// The key after which the page starts, from `cursor` (made by [`encode_cursor`]); sent empty, it is
    /// left out: the first page.
    pub fn cursor(&self) -> Result<Option<String>, ApiError> {
        self.cursor_with(decode_cursor)
    }

    /// The position `decode` reads from `cursor`, for a listing whose cursors take another form; sent
    /// empty, it is left out.
    pub fn cursor_with<T>(
        &self,
        decode: impl Fn(&str) -> Result<T, ApiError>,
    ) -> Result<Option<T>, ApiError> {
        self.get("cursor")
            .filter(|c| !c.is_empty())
            .map(decode)
            .transpose()
    }
}

/// The cursor after `key`: a position in a listing's order, the last key of the previous page in
/// lowercase hex of its UTF-8. Every cursor of this form is a position (a key that was never stored lies
/// between two that were), so a client never holds one the listing cannot read; the form is in the
/// document (`openapi::PageQuery`).
pub fn encode_cursor(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_cursor(cursor: &str) -> Result<String, ApiError> {
    let valid = cursor.len().is_multiple_of(2)
        && cursor.len() <= 1024
        && cursor
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !valid {
        return Err(invalid_cursor(
            "cursor is the next_cursor of a page: lowercase hex, at most 1024 digits",
        ));
    }
    let bytes: Vec<u8> = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&cursor[i..i + 2], 16).expect("checked hex digits"))
        .collect();
    // A key is text; bytes that are not (a made-up cursor) still name a position in the order.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A cursor that is not of its listing's form: 400 `invalid_cursor`, `message` saying the form.
pub fn invalid_cursor(message: &str) -> ApiError {
    ApiError {
        code: ErrorCode::InvalidCursor,
        message: message.into(),
        field: Some("cursor".into()),
        retry_after: None,
    }
}

/// The page envelope: `items`, the `limit` applied and `next_cursor` (null on the last page). Each item
/// keeps its record's order of fields.
#[derive(serde::Serialize)]
pub struct Page<V> {
    items: Vec<V>,
    limit: i64,
    next_cursor: Option<String>,
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

/// The ETag of a version: `W/"<version>"`.
pub fn etag(version: i64) -> String {
    format!("W/\"{version}\"")
}

/// Requires `If-Match` naming the current version: 428 without it, 412 when it names another version.
pub fn require_if_match(req: &HttpRequest, what: &str, current: i64) -> Result<(), ApiError> {
    let values: Vec<&str> = req
        .headers()
        .get_all(header::IF_MATCH)
        .filter_map(|v| v.to_str().ok())
        .collect();
    let tags: Vec<&str> = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    // An empty If-Match names no version: the same as none.
    if tags.is_empty() {
        return Err(ApiError::new(
            ErrorCode::PreconditionRequired,
            format!("send If-Match with the ETag of the {what} you read (GET it first)"),
        ));
    }
    if tags.contains(&"*") {
        return Err(ApiError::new(
            ErrorCode::PreconditionRequired,
            "If-Match must name an ETag; * would overwrite blindly and is not accepted",
        ));
    }
    let matches = tags.iter().any(|t| {
        let t = t.strip_prefix("W/").unwrap_or(t);
        t.trim_matches('"').parse::<i64>().ok() == Some(current)
    });
    if matches {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "the {what} was changed since you read it (its ETag is now {}); read it again",
                etag(current)
            ),
        ))
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
    use regex::Regex;
    use serde_json::json;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        for key in ["alice", "", "Qualitäts-Team", "a b/c"] {
            assert_eq!(decode_cursor(&encode_cursor(key)).unwrap(), key);
        }
        assert_eq!(
            decode_cursor("ff").unwrap(),
            "\u{fffd}",
            "a position all the same"
        );
        for bad in ["not-a-cursor!", "abc", "AB", "0g", &"00".repeat(513)] {
            assert!(decode_cursor(bad).is_err(), "{bad}");
        }
    }

    /// The documented form of a cursor is exactly what a listing reads.
    #[test]
    fn the_cursor_pattern_is_what_is_read() {
        let pattern = Regex::new(&crate::openapi::cursor_pattern("/admin/v1/users")).unwrap();
        for text in [
            "",
            "00",
            "616c696365",
            "abc",
            "AB",
            "0g",
            " 00",
            "00\n",
            &"00".repeat(512),
            &"00".repeat(513),
        ] {
            let read = text.is_empty() || decode_cursor(text).is_ok();
            assert_eq!(pattern.is_match(text), read, "{text:?}");
        }
    }

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
