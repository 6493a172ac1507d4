//! Integers as JSON Schema counts them. A field documented as `integer` accepts `3600.0` too (JSON
//! Schema: a number whose fraction is zero is an integer), which serde's integer types refuse; clients
//! that write every number as a float (some generators, some languages' JSON) would be refused for a
//! value the document allows. Request fields documented as integers read through these:
//! `#[serde(deserialize_with = "common::whole::number")]`, or `common::whole::optional` for an
//! `Option` field (with `#[serde(default)]`). A fraction, or a value outside the field's type, is refused.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};

/// An integer of type `T`, written as an integer or as a number whose fraction is zero.
pub fn number<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    deserializer.deserialize_any(Whole(PhantomData))
}

/// As `number`, or `null` (read as absent).
pub fn optional<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    deserializer.deserialize_option(Optional(PhantomData))
}

struct Whole<T>(PhantomData<T>);

impl<'de, T: TryFrom<i64> + TryFrom<u64>> Visitor<'de> for Whole<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an integer of {}", std::any::type_name::<T>())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        // Whole and within i64: 2^63 is the first f64 past it, and every whole f64 below it converts exactly.
        if v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63) {
            self.visit_i64(v as i64)
        } else {
            Err(E::invalid_type(de::Unexpected::Float(v), &self))
        }
    }
}

struct Optional<T>(PhantomData<T>);

impl<'de, T: TryFrom<i64> + TryFrom<u64>> Visitor<'de> for Optional<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an integer of {} or null", std::any::type_name::<T>())
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        number(deserializer).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Body {
        #[serde(deserialize_with = "super::number")]
        count: u32,
        #[serde(default, deserialize_with = "super::optional")]
        ttl: Option<i64>,
    }

    fn read(json: &str) -> Result<Body, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn a_whole_float_is_an_integer() {
        assert_eq!(
            read(r#"{"count": 2.0, "ttl": 3600.0}"#).unwrap(),
            Body {
                count: 2,
                ttl: Some(3600)
            }
        );
        assert_eq!(
            read(r#"{"count": 2, "ttl": -1e3}"#).unwrap(),
            Body {
                count: 2,
                ttl: Some(-1000)
            }
        );
    }

    #[test]
    fn null_or_absent_is_none() {
        for json in [r#"{"count": 1, "ttl": null}"#, r#"{"count": 1}"#] {
            assert_eq!(
                read(json).unwrap(),
                Body {
                    count: 1,
                    ttl: None
                }
            );
        }
    }

    #[test]
    fn a_fraction_a_string_or_a_value_out_of_range_is_refused() {
        for json in [
            r#"{"count": 2.5}"#,
            r#"{"count": "2"}"#,
            r#"{"count": -1}"#,
            r#"{"count": 4294967296}"#,
            r#"{"count": 1e300}"#,
            r#"{"count": null}"#,
            r#"{"count": 1, "ttl": 1.5}"#,
            r#"{"count": 1, "ttl": 9.3e18}"#,
            r#"{"count": 1, "ttl": true}"#,
        ] {
            assert!(read(json).is_err(), "{json} was read");
        }
    }
}
