//! A nested record read from a JSON object only. serde reads a struct from an array of its fields too,
//! in order (`"callback": ["https://…", 5]`), which no client means and no document describes; a field
//! holding a record reads through `#[serde(deserialize_with = "common::object_only::read")]`. The top
//! level of a body is checked before parsing (`http::is_json_object`).

use serde::de::{DeserializeOwned, Deserializer, Error};
use serde::Deserialize;
use serde_json::{Map, Value};

/// `T` from a JSON object; anything else is an invalid type. An error inside the record names its path
/// there (`attempts: invalid type ...`), after the path of the field itself.
pub fn read<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<T, D::Error> {
    let object = Map::<String, Value>::deserialize(deserializer)?;
    serde_path_to_error::deserialize(Value::Object(object)).map_err(|e| {
        let path = e.path().to_string();
        match path.as_str() {
            "" | "." => D::Error::custom(e.into_inner()),
            _ => D::Error::custom(format!("{path}: {}", e.into_inner())),
        }
    })
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        url: String,
        #[serde(default)]
        attempts: u32,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(deserialize_with = "super::read")]
        inner: Inner,
    }

    #[test]
    fn a_record_is_read_from_an_object_only() {
        let read = |json: &str| serde_json::from_str::<Outer>(json).map_err(|e| e.to_string());
        assert_eq!(
            read(r#"{"inner": {"url": "u", "attempts": 2}}"#)
                .unwrap()
                .inner,
            Inner {
                url: "u".into(),
                attempts: 2
            }
        );
        assert!(
            serde_json::from_str::<Inner>(r#"["u", 2]"#).is_ok(),
            "serde alone takes it"
        );
        for bad in [
            r#"{"inner": ["u", 2]}"#,
            r#"{"inner": null}"#,
            r#"{"inner": {"url": "u", "colour": 1}}"#,
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
        let inside = read(r#"{"inner": {"url": "u", "attempts": "2"}}"#).unwrap_err();
        assert!(inside.starts_with("attempts: invalid type"), "{inside}");
    }
}
