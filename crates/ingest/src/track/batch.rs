//! The JSON of a batch, built as it is read: `{"events": [...]}` or the bare array, event by event and
//! only as far as a batch may go. Reading stops at event 301, and an event keeps only what its checks
//! look at: a field or event that is an array or an object (never valid, `validate` refuses it by its
//! kind) is skipped and kept empty, a string is kept up to one character past the longest a field may
//! hold, and no more custom properties than an event may have, and one, are kept. A body of many small values therefore costs
//! no more memory than the 300 events it may carry, whatever it inflates to.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::validate::{KNOWN_FIELDS, MAX_NAME_CHARS, MAX_PROPERTIES, MAX_PROPERTY_VALUE_CHARS};

/// The most events one batch may carry; a larger batch is refused whole.
pub const MAX_BATCH: usize = 300;

/// A string value is kept up to this many characters: one past the longest any field may hold, so a
/// longer one is still refused as too long.
const KEPT_VALUE_CHARS: usize = MAX_PROPERTY_VALUE_CHARS + 1;
/// A field name is kept up to this many characters, one past the longest allowed.
const KEPT_NAME_CHARS: usize = MAX_NAME_CHARS + 1;
/// The custom properties kept of one event, besides its known fields: one more than allowed, so an event
/// with too many is still refused for it.
const KEPT_PROPERTIES: usize = MAX_PROPERTIES + 1;

/// Why a batch that is valid JSON so far was not read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Event 301 was met.
    TooManyEvents,
    /// The body is not `{"events": [...]}` or an array; the message says what it is.
    Shape(String),
}

/// Reads the events of a batch from `de`; a [`Stop`] is set in `stop` when reading ended because of it
/// (the JSON error is then only how reading was broken off).
pub fn read<'de, D: de::Deserializer<'de>>(
    de: D,
    stop: &RefCell<Option<Stop>>,
) -> Result<Vec<Value>, D::Error> {
    de.deserialize_any(Body { stop })
}

fn stopped<E: de::Error>(stop: &RefCell<Option<Stop>>, why: Stop) -> E {
    *stop.borrow_mut() = Some(why);
    E::custom("the batch was not read further")
}

/// The whole body: the object with `events`, or the array itself.
struct Body<'a> {
    stop: &'a RefCell<Option<Stop>>,
}

impl<'de> Visitor<'de> for Body<'_> {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("{\"events\": [...]}")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<Value>, A::Error> {
        Events { stop: self.stop }.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Value>, A::Error> {
        let mut events = None;
        while let Some(key) = map.next_key::<KeptString>()? {
            if key.0 == "events" {
                // A repeated key: the last one counts, as it did when the body was read whole.
                events = Some(map.next_value_seed(Events { stop: self.stop })?);
            } else {
                map.next_value::<Skip>()?;
            }
        }
        events.ok_or_else(|| {
            stopped(
                self.stop,
                Stop::Shape("the body has no \"events\" array".into()),
            )
        })
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Vec<Value>, E> {
        Err(self.not_a_batch("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Vec<Value>, E> {
        Err(self.not_a_batch("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Vec<Value>, E> {
        Err(self.not_a_batch("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Vec<Value>, E> {
        Err(self.not_a_batch("a number"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<Value>, E> {
        Err(self.not_a_batch("a string"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Vec<Value>, E> {
        Err(self.not_a_batch("null"))
    }
}

impl Body<'_> {
    fn not_a_batch<E: de::Error>(&self, kind: &str) -> E {
        stopped(
            self.stop,
            Stop::Shape(format!(
                "the body must be {{\"events\": [...]}}, got {kind}"
            )),
        )
    }
}

/// The `events` array: at most [`MAX_BATCH`] events, reading stopped at the next.
struct Events<'a> {
    stop: &'a RefCell<Option<Stop>>,
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = Vec<Value>;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Vec<Value>, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut events = Vec::new();
        while events.len() < MAX_BATCH {
            match seq.next_element_seed(Kept)? {
                Some(event) => events.push(event),
                None => return Ok(events),
            }
        }
        match seq.next_element::<Skip>()? {
            Some(_) => Err(stopped(self.stop, Stop::TooManyEvents)),
            None => Ok(events),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Vec<Value>, A::Error> {
        Err(self.not_an_array("an object"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Vec<Value>, E> {
        Err(self.not_an_array("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Vec<Value>, E> {
        Err(self.not_an_array("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Vec<Value>, E> {
        Err(self.not_an_array("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Vec<Value>, E> {
        Err(self.not_an_array("a number"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<Value>, E> {
        Err(self.not_an_array("a string"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Vec<Value>, E> {
        Err(self.not_an_array("null"))
    }
}

impl Events<'_> {
    fn not_an_array<E: de::Error>(&self, kind: &str) -> E {
        stopped(
            self.stop,
            Stop::Shape(format!("\"events\" must be an array, got {kind}")),
        )
    }
}

/// An event, or one of its fields, as far as it is kept: scalars as sent (strings cut at
/// [`KEPT_VALUE_CHARS`]); an array or an object inside an event skipped and kept empty; an event object
/// with its known fields and its first [`KEPT_PROPERTIES`] custom properties.
#[derive(Clone, Copy)]
struct Kept;

/// What a field inside an event keeps: scalars, and nested JSON only by its kind.
#[derive(Clone, Copy)]
struct Field;

impl<'de> DeserializeSeed<'de> for Kept {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(ScalarOr { fields: true })
    }
}

impl<'de> DeserializeSeed<'de> for Field {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(ScalarOr { fields: false })
    }
}

/// A scalar as it is, strings cut; an object read field by field when `fields` (an event), else
/// skipped; an array skipped.
struct ScalarOr {
    fields: bool,
}

impl<'de> Visitor<'de> for ScalarOr {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(cut(v, KEPT_VALUE_CHARS)))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Value::Array(Vec::new()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        let mut properties = 0;
        while let Some(key) = map.next_key::<KeptString>()? {
            let known = KNOWN_FIELDS.contains(&key.0.as_str());
            if self.fields && (known || properties < KEPT_PROPERTIES) {
                properties += usize::from(!known);
                fields.insert(key.0, map.next_value_seed(Field)?);
            } else {
                map.next_value::<Skip>()?;
            }
        }
        Ok(Value::Object(fields))
    }
}

/// A value read and dropped. Unlike `serde::de::IgnoredAny`, which serde_json skips without a limit of
/// depth, it nests as deep as the parser's recursion limit only: deeper JSON is malformed, as it is
/// everywhere else.
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: de::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

/// A key, cut at [`KEPT_NAME_CHARS`].
struct KeptString(String);

impl<'de> de::Deserialize<'de> for KeptString {
    fn deserialize<D: de::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Key;
        impl Visitor<'_> for Key {
            type Value = KeptString;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<KeptString, E> {
                Ok(KeptString(cut(v, KEPT_NAME_CHARS)))
            }
        }
        de.deserialize_str(Key)
    }
}

/// The first `chars` characters of `text`.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => text[..end].to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_str(text: &str) -> Result<Vec<Value>, Option<Stop>> {
        let stop = RefCell::new(None);
        let mut de = serde_json::Deserializer::from_str(text);
        read(&mut de, &stop).map_err(|_| stop.into_inner())
    }

    #[test]
    fn events_keep_what_their_checks_read() {
        let long = "é".repeat(20_000);
        let text = json!({"other": {"x": [1, 2]}, "events": [
            {"event_name": "a", "n": 1.5, "i": -3, "b": true, "z": null,
             "nested": {"k": "v"}, "list": [1, 2, 3], "long": long},
            [1, 2], "text", 7
        ]})
        .to_string();
        let events = read_str(&text).unwrap();
        assert_eq!(events.len(), 4);
        let first = events[0].as_object().unwrap();
        assert_eq!(first["event_name"], json!("a"));
        assert_eq!(first["n"], json!(1.5));
        assert_eq!(first["i"], json!(-3));
        assert_eq!(first["b"], json!(true));
        assert_eq!(first["z"], Value::Null);
        assert_eq!(first["nested"], json!({}), "kept by its kind only");
        assert_eq!(first["list"], json!([]));
        let kept = first["long"].as_str().unwrap().chars().count();
        assert_eq!(
            kept,
            MAX_PROPERTY_VALUE_CHARS + 1,
            "still longer than allowed"
        );
        assert_eq!(events[1], json!([]));
        assert_eq!(events[2], json!("text"));
        assert_eq!(events[3], json!(7));
    }

    #[test]
    fn an_event_keeps_its_known_fields_and_one_property_more_than_allowed() {
        let mut event = serde_json::Map::new();
        for i in 0..10_000 {
            event.insert(format!("p{i}"), json!(i));
        }
        // After the properties, in the order sent.
        event.insert("user_id".into(), json!("u"));
        let events = read_str(&json!([event]).to_string()).unwrap();
        let kept = events[0].as_object().unwrap();
        assert_eq!(kept.len(), MAX_PROPERTIES + 2);
        assert_eq!(kept["user_id"], json!("u"));
        let key = "k".repeat(1000);
        let events = read_str(&json!([{ key: 1 }]).to_string()).unwrap();
        let kept = events[0].as_object().unwrap().keys().next().unwrap().len();
        assert_eq!(kept, MAX_NAME_CHARS + 1);
    }

    #[test]
    fn reading_stops_at_event_301() {
        let ok = json!(vec![json!({}); MAX_BATCH]).to_string();
        assert_eq!(read_str(&ok).unwrap().len(), MAX_BATCH);
        // Broken JSON past event 301 is never reached.
        let over = format!("{{\"events\": [{}0, {{{{{{", "0, ".repeat(MAX_BATCH));
        assert_eq!(read_str(&over), Err(Some(Stop::TooManyEvents)));
    }

    #[test]
    fn other_shapes_say_what_they_are() {
        let shape = |text: &str| match read_str(text) {
            Err(Some(Stop::Shape(message))) => message,
            other => panic!("{text}: {other:?}"),
        };
        assert!(shape("{\"other\": []}").contains("no \"events\""));
        assert!(shape("{\"events\": {}}").contains("must be an array, got an object"));
        assert!(shape("{\"events\": 3}").contains("got a number"));
        assert!(shape("\"events\"").contains("got a string"));
        assert_eq!(
            read_str("{\"events\": ["),
            Err(None),
            "malformed JSON is no stop"
        );
        let deep = format!("[{}{}]", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(read_str(&deep), Err(None), "deeper than the parser follows");
    }
}
