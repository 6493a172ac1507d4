//! The transcript JSON of a call (docs/analytics-api.md, Transcript JSON): what `/transcribe` answers and
//! what an upload into a folder may send. An upload is checked field by field (errors name the path, e.g.
//! `utterances[2].end`), then normalized: the service sets `tId`, `requestid` and `last_modified`, fills
//! `datetime` (local time in the organization's zone), `filename`, `agent_id` and `audio_seconds` when they
//! are missing, and keeps any other field as given.

use std::borrow::Cow;
use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use chrono_tz::Tz;
use serde::de::{Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::names;
use crate::Invalid;

/// The format of `datetime`: local time without a zone.
pub const DATETIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Speaker {
    Agent,
    Client,
}

/// A value that must be a string, checked without keeping it (a call has hundreds of words).
#[derive(Debug)]
struct AnyText;

impl<'de> Deserialize<'de> for AnyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = AnyText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<AnyText, E> {
                Ok(AnyText)
            }
        }
        d.deserialize_str(Text)
    }
}

#[derive(Debug, Deserialize)]
struct WordView {
    #[serde(rename = "word")]
    _word: AnyText,
    start: f64,
    end: f64,
    confidence: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct UtteranceView<'a> {
    #[serde(rename = "speaker")]
    _speaker: Speaker,
    #[serde(rename = "channel")]
    _channel: Option<u32>,
    start: f64,
    end: f64,
    confidence: Option<f64>,
    #[serde(borrow)]
    text: Cow<'a, str>,
    words: Option<Vec<WordView>>,
}

#[derive(Debug, Deserialize)]
struct TranscriptView<'a> {
    filename: Option<String>,
    datetime: Option<String>,
    agent_id: Option<String>,
    audio_seconds: Option<f64>,
    metadata: Option<Map<String, Value>>,
    #[serde(borrow)]
    utterances: Vec<UtteranceView<'a>>,
}

impl<'a> TranscriptView<'a> {
    /// Reads the upload field by field, straight from its text. Only a refused upload is read a second
    /// time, to name the path of what is wrong: tracking the path costs an allocation per key.
    fn read(text: &'a str) -> Result<Self, Invalid> {
        serde_json::from_str(text).map_err(|_| {
            let mut de = serde_json::Deserializer::from_str(text);
            match serde_path_to_error::deserialize::<_, TranscriptView>(&mut de) {
                Err(e) => Invalid(format!("transcript {}: {}", e.path(), e.inner())),
                Ok(_) => Invalid("transcript: not a transcript JSON".into()),
            }
        })
    }
}

/// A checked and normalized transcript.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub datetime: String,
    pub filename: String,
    pub agent_id: String,
    pub audio_seconds: f64,
    /// Every metadata field of the call.
    pub metadata: BTreeMap<String, String>,
    /// The whole transcript JSON as stored.
    pub stored: Vec<u8>,
}

/// What the service fills in when it stores a call.
pub struct Stamp<'a> {
    pub call_id: &'a str,
    pub request_id: &'a str,
    pub last_modified: &'a str,
    /// The name of the uploaded file, used when the transcript names none.
    pub upload_name: Option<&'a str>,
    pub timezone: Tz,
    pub now: DateTime<Utc>,
}

impl Transcript {
    /// Checks `bytes` as a transcript JSON and normalizes it; `extra_metadata` (the upload's `metadata`
    /// field) is laid over the transcript's own.
    pub fn parse(
        bytes: &[u8],
        extra_metadata: Option<Map<String, Value>>,
        stamp: &Stamp<'_>,
    ) -> Result<Transcript, Invalid> {
        let not_a_transcript = |e: &dyn std::fmt::Display| {
            Invalid(format!("the file is not a transcript JSON object: {e}"))
        };
        // Checked as UTF-8 once, here: the two readings below then take every string as it is.
        let text = std::str::from_utf8(bytes).map_err(|e| not_a_transcript(&e))?;
        // The top level only: every member the service does not set is stored as the bytes it came as,
        // so no tree of the utterances and their words is built and freed.
        let mut members: BTreeMap<String, &RawValue> =
            serde_json::from_str(text).map_err(|e| not_a_transcript(&e))?;
        let view = TranscriptView::read(text)?;
        check_times(&view)?;

        let datetime = match &view.datetime {
            Some(text) => local_datetime(text, stamp.timezone)?,
            None => stamp.now.with_timezone(&stamp.timezone).naive_local(),
        }
        .format(DATETIME_FORMAT)
        .to_string();
        // The search index's own rule: what it would refuse is never stored.
        common::search::check_datetime(&datetime)
            .map_err(|e| Invalid(format!("transcript {e}")))?;
        let filename = view
            .filename
            .clone()
            .or_else(|| stamp.upload_name.map(str::to_string))
            .unwrap_or_else(|| format!("{}.json", stamp.call_id));
        let agent_id = view.agent_id.clone().unwrap_or_default();
        for (field, value) in [("filename", &filename), ("agent_id", &agent_id)] {
            names::check_value(field, value)?;
        }
        if names::RESERVED_AGENT_IDS.contains(&agent_id.as_str()) {
            return Err(Invalid(format!(
                "transcript agent_id: {agent_id:?} is reserved: an /appstats day has its own date and \
                 agents keys beside its agents' ids"
            )));
        }
        let audio_seconds = view
            .audio_seconds
            .unwrap_or_else(|| view.utterances.iter().map(|u| u.end).fold(0.0, f64::max));
        if !audio_seconds.is_finite() || audio_seconds < 0.0 {
            return Err(Invalid(
                "transcript audio_seconds: must be a non-negative number".into(),
            ));
        }

        let mut metadata = BTreeMap::new();
        for (source, fields) in [
            ("metadata", view.metadata),
            ("the metadata field", extra_metadata),
        ] {
            for (field, value) in fields.into_iter().flatten() {
                names::check_field(&field).map_err(|e| Invalid(format!("{source}: {e}")))?;
                let value = metadata_value(&field, &value)?;
                metadata.insert(field, value);
            }
        }
        names::check_field_count(metadata.len(), "the call has")?;

        let raw = |value: Value| {
            serde_json::value::to_raw_value(&value).map_err(|e| Invalid(format!("transcript: {e}")))
        };
        let stamped = [
            ("tId", raw(stamp.call_id.into())?),
            ("requestid", raw(stamp.request_id.into())?),
            ("datetime", raw(datetime.as_str().into())?),
            ("last_modified", raw(stamp.last_modified.into())?),
            ("filename", raw(filename.as_str().into())?),
            ("agent_id", raw(agent_id.as_str().into())?),
            ("audio_seconds", raw(audio_seconds.into())?),
            ("metadata", raw(metadata_json(&metadata))?),
        ];
        for (name, value) in &stamped {
            members.insert((*name).to_string(), value);
        }
        let stored =
            serde_json::to_vec(&members).map_err(|e| Invalid(format!("transcript: {e}")))?;
        Ok(Transcript {
            datetime,
            filename,
            agent_id,
            audio_seconds,
            metadata,
            stored,
        })
    }
}

/// The text the search index holds: the utterances in order, one per line.
pub fn text_of(json: &Map<String, Value>) -> String {
    let mut text = String::new();
    for utterance in json
        .get("utterances")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = utterance.get("text").and_then(Value::as_str) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(t);
        }
    }
    text
}

pub fn metadata_json(metadata: &BTreeMap<String, String>) -> Value {
    Value::Object(
        metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// A metadata value as stored: strings as they are, numbers and booleans as their text.
pub fn metadata_value(field: &str, value: &Value) -> Result<String, Invalid> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => {
            return Err(Invalid(format!(
                "the value of {field} must be a string, a number or a boolean"
            )))
        }
    };
    names::check_value(field, &text)?;
    Ok(text)
}

/// Checks every time and confidence; the path of a bad one is written only when it is reported.
fn check_times(view: &TranscriptView) -> Result<(), Invalid> {
    let span = |path: &dyn Fn() -> String, start: f64, end: f64| {
        if !(start.is_finite() && end.is_finite()) || start < 0.0 || end < start {
            Err(Invalid(format!(
                "transcript {}: start and end must be seconds with 0 <= start <= end",
                path()
            )))
        } else {
            Ok(())
        }
    };
    let confidence = |path: &dyn Fn() -> String, c: Option<f64>| match c {
        Some(c) if !(0.0..=1.0).contains(&c) => Err(Invalid(format!(
            "transcript {}.confidence: must be between 0 and 1",
            path()
        ))),
        _ => Ok(()),
    };
    for (i, u) in view.utterances.iter().enumerate() {
        let utterance = || format!("utterances[{i}]");
        span(&utterance, u.start, u.end)?;
        confidence(&utterance, u.confidence)?;
        if u.text
            .chars()
            .any(|c| c.is_control() && c != '\t' && c != '\n')
        {
            return Err(Invalid(format!(
                "transcript utterances[{i}].text: contains control characters"
            )));
        }
        for (j, w) in u.words.iter().flatten().enumerate() {
            let word = || format!("utterances[{i}].words[{j}]");
            span(&word, w.start, w.end)?;
            confidence(&word, w.confidence)?;
        }
    }
    Ok(())
}

/// `text` as local time in `zone`: local time as given, or a time with an offset converted into the zone.
fn local_datetime(text: &str, zone: Tz) -> Result<NaiveDateTime, Invalid> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&zone).naive_local());
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(t);
        }
    }
    Err(Invalid(format!(
        "transcript datetime: {text:?} is not YYYY-MM-DDTHH:MM:SS (local time) or RFC 3339"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp() -> Stamp<'static> {
        Stamp {
            call_id: "c1",
            request_id: "r1",
            last_modified: "2026-11-23T10:00:00.000Z",
            upload_name: Some("upload.json"),
            timezone: chrono_tz::Europe::Berlin,
            now: "2026-11-23T09:00:00Z".parse().unwrap(),
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_is_refused_with_where() {
        let e = Transcript::parse(b"{\"utterances\": [], \"x\": \"\xff\"}", None, &stamp())
            .unwrap_err();
        assert!(
            matches!(&e, Invalid(m)
                if m.starts_with("the file is not a transcript JSON object")
                    && m.contains("utf-8") && m.contains("index 25")),
            "{e}"
        );
    }

    #[test]
    fn a_minimal_upload_is_completed() {
        let t = Transcript::parse(
            br#"{"utterances": [{"speaker": "agent", "start": 0.5, "end": 2.25, "text": "hello"}]}"#,
            None,
            &stamp(),
        )
        .unwrap();
        assert_eq!(t.datetime, "2026-11-23T10:00:00", "now, in Berlin");
        assert_eq!(t.filename, "upload.json");
        assert_eq!(t.audio_seconds, 2.25);
        let json: Map<String, Value> = serde_json::from_slice(&t.stored).unwrap();
        assert_eq!(json["tId"], "c1");
        assert_eq!(text_of(&json), "hello");
    }

    #[test]
    fn offsets_are_converted_and_metadata_is_merged() {
        let t = Transcript::parse(
            br#"{"datetime": "2026-07-01T08:00:00Z", "metadata": {"queue": "billing", "n": 3},
                 "utterances": [], "custom": {"kept": true}}"#,
            Some(serde_json::from_str(r#"{"queue": "sales"}"#).unwrap()),
            &stamp(),
        )
        .unwrap();
        assert_eq!(t.datetime, "2026-07-01T10:00:00", "summer time in Berlin");
        assert_eq!(t.metadata["queue"], "sales");
        assert_eq!(t.metadata["n"], "3");
        let json: Value = serde_json::from_slice(&t.stored).unwrap();
        assert_eq!(json["custom"]["kept"], true, "other fields kept as given");
        assert_eq!(json["metadata"]["n"], "3", "metadata stored as text");
        assert_eq!(json["datetime"], "2026-07-01T10:00:00");
    }

    #[test]
    fn errors_name_the_path() {
        for (body, path) in [
            (
                r#"{"utterances": [{"speaker": "robot", "start": 0, "end": 1, "text": ""}]}"#,
                "utterances[0].speaker",
            ),
            (
                r#"{"utterances": [{"speaker": "agent", "start": 2, "end": 1, "text": ""}]}"#,
                "utterances[0]",
            ),
            (
                r#"{"utterances": [{"speaker": "agent", "start": 0, "end": 1, "text": "", "words": [{"word": "a", "start": 0, "end": 1, "confidence": 2}]}]}"#,
                "utterances[0].words[0].confidence",
            ),
            (r#"{"datetime": "yesterday", "utterances": []}"#, "datetime"),
            (r#"{"metadata": {"tId": "x"}, "utterances": []}"#, "tId"),
            (
                r#"{"metadata": {"queue": {"nested": 1}}, "utterances": []}"#,
                "queue",
            ),
            (r#"[]"#, "not a transcript"),
        ] {
            let e = Transcript::parse(body.as_bytes(), None, &stamp()).unwrap_err();
            assert!(e.to_string().contains(path), "{path}: {e}");
        }
    }
}
