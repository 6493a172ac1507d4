//! Query strings read into the typed structs the handlers take and the document describes: each
//! parameter at most once, only the names the struct has, each value read by its type. An error names
//! the parameter: `limit` answers `invalid_limit`, `cursor` `invalid_cursor`, any other `invalid_field`.
//! The values shared by several listings (the page size, the cursors, the filters) are types here, each
//! with the schema of what it reads.

use std::collections::HashSet;
use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use common::{ApiError, ErrorCode};
use directory::{STATUS_ACTIVE, STATUS_INACTIVE};
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use utoipa::openapi::schema::Object;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::schema;

pub const DEFAULT_LIMIT: i64 = 25;
pub const MAX_LIMIT: i64 = 100;

/// The query string of a request as `T`, read by the handler with [`Query::read`] once the caller is
/// known: an extractor that failed would answer before the caller's token is checked (actix answers the
/// first extractor error it meets, whatever the order of the arguments), so a request without a valid
/// token would learn about its parameters instead of being refused.
pub struct Query<T>(Result<T, ApiError>);

impl<T> Query<T> {
    pub fn read(self) -> Result<T, ApiError> {
        self.0
    }
}

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Query(read(req.query_string()))))
    }
}

/// `query` as `T`: unknown and repeated parameters refused, values read by their types.
pub fn read<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let known = field_names::<T>();
    let mut seen = HashSet::new();
    for (key, _) in url::form_urlencoded::parse(query.as_bytes()) {
        if !known.contains(&key.as_ref()) {
            return Err(ApiError::field(
                key.as_ref(),
                format!(
                    "unknown query parameter {key}; this endpoint accepts {}",
                    known.join(", ")
                ),
            ));
        }
        if !seen.insert(key.clone()) {
            return Err(ApiError::field(
                key.as_ref(),
                format!("query parameter {key} is given more than once"),
            ));
        }
    }
    let parameters =
        serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(parameters).map_err(|e| {
        let field = e.path().to_string();
        let code = match field.as_str() {
            "limit" => ErrorCode::InvalidLimit,
            "cursor" => ErrorCode::InvalidCursor,
            _ => ErrorCode::InvalidField,
        };
        ApiError {
            code,
            message: format!("{field}: {}", e.inner()),
            field: Some(field),
            retry_after: None,
        }
    })
}

/// The fields of the struct `T` reads, as serde's derive declares them.
fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Fields<'a>(&'a mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for Fields<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Self::Error::custom("fields read"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

/// `limit`: items per page.
pub struct Limit(pub i64);

impl Limit {
    pub fn of(limit: Option<Limit>) -> i64 {
        limit.map_or(DEFAULT_LIMIT, |l| l.0)
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        match text.parse::<i64>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(Limit(n)),
            _ => Err(D::Error::custom(format!(
                "must be an integer from 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}), got {text:?}"
            ))),
        }
    }
}

impl PartialSchema for Limit {
    fn schema() -> RefOr<Schema> {
        let mut limit = schema::integer(Some(1), Some(MAX_LIMIT), Some(DEFAULT_LIMIT), false);
        limit.description = Some(format!(
            "Items per page, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}); anything else is 400 invalid_limit"
        ));
        limit.into()
    }
}

impl ToSchema for Limit {}

/// The lowest documented form of a key cursor: at most 512 bytes of key, in hex.
const KEY_CURSOR_DIGITS: usize = 1024;

/// `cursor` of the listings keyed by name (users, roles, clients): the last key of the previous page in
/// lowercase hex of its UTF-8, as [`encode_cursor`] makes it; empty, the first page. Every cursor of
/// this form is a position (a key that was never stored lies between two that were), so a client never
/// holds one the listing cannot read.
pub struct KeyCursor(Option<String>);

impl KeyCursor {
    /// The key after which the page starts; none for the first page.
    pub fn after(cursor: Option<KeyCursor>) -> Option<String> {
        cursor.and_then(|c| c.0)
    }
}

/// The cursor after `key`.
pub fn encode_cursor(key: &str) -> String {
    key.bytes().map(|b| format!("{b:02x}")).collect()
}

impl<'de> Deserialize<'de> for KeyCursor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let cursor = String::deserialize(deserializer)?;
        let valid = cursor.len().is_multiple_of(2)
            && cursor.len() <= KEY_CURSOR_DIGITS
            && cursor
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !valid {
            return Err(D::Error::custom(format!(
                "the next_cursor of a page: lowercase hex, at most {KEY_CURSOR_DIGITS} digits"
            )));
        }
        if cursor.is_empty() {
            return Ok(KeyCursor(None));
        }
        let bytes: Vec<u8> = (0..cursor.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&cursor[i..i + 2], 16).expect("checked hex digits"))
            .collect();
        // A key is text; bytes that are not (a made-up cursor) still name a position in the order.
        Ok(KeyCursor(Some(
            String::from_utf8_lossy(&bytes).into_owned(),
        )))
    }
}

impl PartialSchema for KeyCursor {
    fn schema() -> RefOr<Schema> {
        let mut cursor = schema::patterned(
            r"^(?:[0-9a-f]{2}){0,512}$",
            KEY_CURSOR_DIGITS,
            "616c696365",
            false,
        );
        cursor.description = Some(
            "The next_cursor of the previous page (empty: the first page): the last key of that page \
             in lowercase hex. Pages are keyed on the sort key, so items present throughout a walk \
             appear exactly once even while others are inserted or deleted."
                .into(),
        );
        cursor.into()
    }
}

impl ToSchema for KeyCursor {}

/// The `status` filter of the user and role listings: `ACTIVE` or `INACTIVE`, in any case.
pub struct StatusFilter(pub String);

impl<'de> Deserialize<'de> for StatusFilter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let status = String::deserialize(deserializer)?.to_ascii_uppercase();
        if status != STATUS_ACTIVE && status != STATUS_INACTIVE {
            return Err(D::Error::custom(format!(
                "must be {STATUS_ACTIVE} or {STATUS_INACTIVE}"
            )));
        }
        Ok(StatusFilter(status))
    }
}

impl PartialSchema for StatusFilter {
    fn schema() -> RefOr<Schema> {
        schema::one_of(&[STATUS_ACTIVE, STATUS_INACTIVE], false).into()
    }
}

impl ToSchema for StatusFilter {}

/// A filter naming something (a role): never empty.
pub struct NameFilter(pub String);

impl<'de> Deserialize<'de> for NameFilter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let role = String::deserialize(deserializer)?;
        if role.is_empty() {
            return Err(D::Error::custom("must not be empty"));
        }
        Ok(NameFilter(role))
    }
}

impl PartialSchema for NameFilter {
    fn schema() -> RefOr<Schema> {
        let mut role = Object::with_type(utoipa::openapi::Type::String);
        role.min_length = Some(1);
        role.into()
    }
}

impl ToSchema for NameFilter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Listing {
        limit: Option<Limit>,
        cursor: Option<KeyCursor>,
        keep: Option<bool>,
    }

    fn error(query: &str) -> (ErrorCode, String, String) {
        let Err(e) = read::<Listing>(query) else {
            panic!("{query} was read");
        };
        (e.code, e.field.unwrap_or_default(), e.message)
    }

    #[test]
    fn parameters_are_read_by_their_types_and_named_when_wrong() {
        let q = read::<Listing>("limit=7&cursor=616c&keep=true").unwrap();
        assert_eq!(Limit::of(q.limit), 7);
        assert_eq!(KeyCursor::after(q.cursor).as_deref(), Some("al"));
        assert_eq!(q.keep, Some(true));
        let q = read::<Listing>("cursor=").unwrap();
        assert_eq!(Limit::of(q.limit), DEFAULT_LIMIT);
        assert_eq!(KeyCursor::after(q.cursor), None);

        for (query, code, field) in [
            ("limit=0", ErrorCode::InvalidLimit, "limit"),
            ("limit=101", ErrorCode::InvalidLimit, "limit"),
            ("limit=", ErrorCode::InvalidLimit, "limit"),
            ("limit=1.5", ErrorCode::InvalidLimit, "limit"),
            ("cursor=ABCD", ErrorCode::InvalidCursor, "cursor"),
            ("cursor=abc", ErrorCode::InvalidCursor, "cursor"),
            ("keep=yes", ErrorCode::InvalidField, "keep"),
            ("colour=red", ErrorCode::InvalidField, "colour"),
            ("limit=5&limit=5", ErrorCode::InvalidField, "limit"),
        ] {
            let (got_code, got_field, message) = error(query);
            assert_eq!(
                (got_code, got_field.as_str()),
                (code, field),
                "{query}: {message}"
            );
        }
        assert!(error("colour=red")
            .2
            .contains("accepts limit, cursor, keep"));
        assert!(error("limit=x")
            .2
            .starts_with("limit: must be an integer from 1 to 100"));
    }

    /// The documented form of a key cursor is exactly what the listings read, and every key comes back
    /// from its cursor (bytes that are not text still name a position).
    #[test]
    fn the_key_cursor_pattern_is_what_is_read() {
        let pattern =
            regex::Regex::new(&crate::openapi::cursor_pattern("/admin/v1/users")).unwrap();
        let long = "ab".repeat(512);
        let too_long = "ab".repeat(513);
        for text in [
            "",
            "61",
            "616c696365",
            "ff00",
            &long,
            &too_long,
            "6",
            "AB",
            "6g",
            " 61",
            "61\n",
        ] {
            let read = read::<Listing>(&format!("cursor={}", urlencoding(text))).is_ok();
            assert_eq!(pattern.is_match(text), read, "{text:?}");
        }
        for key in ["alice", "Qualitäts-Team", "a b/c"] {
            let cursor = encode_cursor(key);
            assert!(pattern.is_match(&cursor), "{key}");
            let q = read::<Listing>(&format!("cursor={cursor}")).unwrap();
            assert_eq!(KeyCursor::after(q.cursor).as_deref(), Some(key));
        }
        let q = read::<Listing>("cursor=ff").unwrap();
        assert_eq!(KeyCursor::after(q.cursor).as_deref(), Some("\u{fffd}"));
    }

    fn urlencoding(text: &str) -> String {
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }
}
