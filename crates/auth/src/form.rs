//! Reading of OAuth request parameters (form bodies and query strings) into the typed forms the endpoints
//! document. RFC 6749 section 3.1: parameters sent without a value are treated as omitted, a parameter
//! must not be repeated, and parameters an endpoint does not know are ignored. Every field of a form is
//! text; an endpoint checks the values it knows in its own order, so a form fails to read only for a
//! required field that is missing.

use std::collections::HashMap;
use std::fmt::Display;

use serde::de::value::{MapDeserializer, StrDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

use crate::error::OAuthError;

#[derive(Debug, Default, Clone)]
pub struct Params(HashMap<String, String>);

impl Params {
    pub fn parse(encoded: &[u8]) -> Result<Params, OAuthError> {
        let mut map = HashMap::new();
        for (key, value) in url::form_urlencoded::parse(encoded) {
            if value.is_empty() {
                continue;
            }
            if map.insert(key.to_string(), value.to_string()).is_some() {
                return Err(OAuthError::invalid_request(format!(
                    "parameter {key} is repeated"
                )));
            }
        }
        Ok(Params(map))
    }

    /// The parameters as the form `T`.
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, OAuthError> {
        T::deserialize(MapDeserializer::new(
            self.0
                .iter()
                .map(|(key, value)| (key.as_str(), Value(value))),
        ))
    }
}

/// A field the form may leave out but the request at hand needs.
pub fn required<'a>(value: &'a Option<String>, key: &str) -> Result<&'a str, OAuthError> {
    value.as_deref().ok_or_else(|| missing(key))
}

/// A parameter that has a second spelling; a request that sends both is refused rather than one being
/// picked silently.
pub fn either<'a>(
    (key, value): (&str, &'a Option<String>),
    (alias, other): (&str, &'a Option<String>),
) -> Result<Option<&'a str>, OAuthError> {
    match (value, other) {
        (Some(_), Some(_)) => Err(OAuthError::invalid_request(format!(
            "send {key} or {alias}, not both"
        ))),
        (value, None) | (None, value) => Ok(value.as_deref()),
    }
}

/// The variant of the enum `T` that `value` names, if any.
pub fn variant<T: DeserializeOwned>(value: &str) -> Option<T> {
    T::deserialize(StrDeserializer::<OAuthError>::new(value)).ok()
}

fn missing(key: &str) -> OAuthError {
    OAuthError::invalid_request(format!("parameter {key} is required"))
}

impl de::Error for OAuthError {
    fn custom<T: Display>(message: T) -> OAuthError {
        OAuthError::invalid_request(message.to_string())
    }

    fn missing_field(field: &'static str) -> OAuthError {
        missing(field)
    }
}

/// A parameter's value: text, and `Some` of it for an optional field.
struct Value<'a>(&'a str);

impl<'de> de::Deserializer<'de> for Value<'de> {
    type Error = OAuthError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OAuthError> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, OAuthError> {
        visitor.visit_some(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, OAuthError> for Value<'de> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    struct Form {
        grant_type: String,
        scope: Option<String>,
        #[serde(rename = "clientId")]
        client_id_camel: Option<String>,
        client_id: Option<String>,
    }

    fn read(encoded: &str) -> Result<Form, OAuthError> {
        Params::parse(encoded.as_bytes())?.read()
    }

    #[test]
    fn a_form_reads_its_fields_and_ignores_the_rest() {
        let form = read("grant_type=x&scope=a+b&other=1&clientId=c").unwrap();
        assert_eq!(form.grant_type, "x");
        assert_eq!(form.scope.as_deref(), Some("a b"));
        assert_eq!(form.client_id_camel.as_deref(), Some("c"));
        assert_eq!(form.client_id, None);
    }

    #[test]
    fn empty_parameters_are_omitted_and_repeated_ones_refused() {
        let form = read("grant_type=x&scope=").unwrap();
        assert_eq!(form.scope, None);
        let missing = read("grant_type=&scope=a").err().unwrap();
        assert_eq!(missing.description, "parameter grant_type is required");
        let repeated = read("grant_type=x&scope=a&scope=b").err().unwrap();
        assert_eq!(repeated.description, "parameter scope is repeated");
    }

    #[test]
    fn two_spellings_of_one_field_are_refused_when_read() {
        let form = read("grant_type=x&client_id=a&clientId=a").unwrap();
        let both = either(
            ("client_id", &form.client_id),
            ("clientId", &form.client_id_camel),
        )
        .unwrap_err();
        assert_eq!(both.description, "send client_id or clientId, not both");
        let form = read("grant_type=x&clientId=a").unwrap();
        let one = either(
            ("client_id", &form.client_id),
            ("clientId", &form.client_id_camel),
        );
        assert_eq!(one.unwrap(), Some("a"));
    }
}
