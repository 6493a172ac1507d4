//! `StrictJson<T>`: a JSON body extractor that refuses what serde_json silently accepts. A key given
//! twice in one object is an error (serde_json keeps the last one, so a check on the first could be
//! bypassed by the second), as repeated form fields and query parameters are elsewhere. Errors answer in
//! the platform's JSON error format and name the key; for a typed body (`#[serde(deny_unknown_fields)]`
//! structs), an unknown field or a value of the wrong type is an `invalid_field` error whose `field` is
//! its path, such as `roles.extra_roles[1]`. A record is read from a JSON object only, at any depth
//! (`object_only`): an array of its fields is the wrong type.

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest};
use serde::de::{DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::{ApiError, ErrorCode};

/// The largest body accepted, in bytes (actix's default payload limit, which reads the body).
pub const MAX_JSON_BODY: usize = 256 * 1024;

pub struct StrictJson<T>(pub T);

impl<T> std::ops::Deref for StrictJson<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for StrictJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let is_json = req
            .headers()
            .get(actix_web::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| {
                let v = v.trim().to_ascii_lowercase();
                v == "application/json" || v.ends_with("+json")
            });
        let body = Bytes::from_request(req, payload);
        Box::pin(async move {
            if !is_json {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "the body must be JSON (Content-Type: application/json)",
                ));
            }
            let bytes = body.await.map_err(|e| {
                let too_large = matches!(
                    e.as_error::<actix_web::error::PayloadError>(),
                    Some(actix_web::error::PayloadError::Overflow)
                ) || e.to_string().contains("size limit");
                if too_large {
                    ApiError::new(
                        ErrorCode::PayloadTooLarge,
                        format!("the body is larger than {MAX_JSON_BODY} bytes"),
                    )
                } else {
                    ApiError::new(
                        ErrorCode::BadRequest,
                        format!("the body could not be read: {e}"),
                    )
                }
            })?;
            parse(&bytes).map(StrictJson)
        })
    }
}

/// Parses `bytes` as `T`, a body that is one JSON object, refusing objects that name a key twice.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.len() > MAX_JSON_BODY {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("the body is larger than {MAX_JSON_BODY} bytes"),
        ));
    }
    if !is_json_object(bytes) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "invalid JSON body: it must be one JSON object {...}",
        ));
    }
    if let Err(e) = check_json(bytes) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("invalid JSON body: {e}"),
        ));
    }
    // Typed bodies name the place of what is wrong, e.g. `roles.extra_roles[1]`.
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(crate::object_only::Objects(&mut de)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path.is_empty() || path == "." {
            ApiError::new(ErrorCode::BadRequest, format!("invalid JSON body: {inner}"))
        } else {
            let message = format!("{path}: {inner}");
            ApiError::field(path, message)
        }
    })
}

/// Whether `bytes` are one JSON value in which no object names a key twice (services whose errors are
/// not the platform's JSON format check bodies with this before parsing them).
pub fn check_json(bytes: &[u8]) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    NoDuplicates::deserialize(&mut de)?;
    de.end()
}

/// Whether `bytes` start as a JSON object does. A typed body is an object: serde would also read a struct
/// from an array, field by field in order, which no client means and no document describes.
pub fn is_json_object(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Walks any JSON value and fails on the first object with a repeated key.
struct NoDuplicates;

impl<'de> Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

impl<'de> Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_none<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicates, A::Error> {
        while seq.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicates, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} is given more than once"
                )));
            }
            map.next_value::<NoDuplicates>()?;
        }
        Ok(NoDuplicates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        items: Vec<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        size: u32,
    }

    #[test]
    fn a_typed_body_is_an_object_not_an_array_of_its_fields() {
        assert!(parse::<Inner>(b" {\"size\": 1}").is_ok());
        let e = parse::<Inner>(b"[1]").unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{}", e.message);
        assert!(e.message.contains("object"), "{}", e.message);
    }

    #[test]
    fn typed_bodies_name_the_path_of_what_is_wrong() {
        assert!(parse::<Outer>(br#"{"name": "a", "items": [{"size": 1}]}"#).is_ok());
        let e =
            parse::<Outer>(br#"{"name": "a", "items": [{"size": 1}, {"size": "x"}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("items[1].size"), "{}", e.message);
        assert_eq!(e.code, ErrorCode::InvalidField);
        let e = parse::<Outer>(br#"{"name": "a", "items": [], "extra": 1}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("extra"), "{}", e.message);
        assert!(e.message.contains("unknown field"), "{}", e.message);
        let e = parse::<Outer>(br#""not an object""#).unwrap_err();
        assert_eq!((e.code, e.field), (ErrorCode::BadRequest, None));
    }

    #[test]
    fn repeated_keys_are_refused_at_any_depth() {
        assert!(parse::<serde_json::Value>(br#"{"a": 1, "b": {"c": [1, {"d": 2}]}}"#).is_ok());
        let e = parse::<serde_json::Value>(br#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(e.message.contains("\"a\""), "{}", e.message);
        assert!(parse::<serde_json::Value>(br#"{"x": [{"k": 1, "k": 1}]}"#).is_err());
        assert!(parse::<serde_json::Value>(br#"{"a": 1} trailing"#).is_err());
    }
}
