//! Parts of a stored transcript JSON read without building its whole tree: a 5-minute call's transcript
//! is some 55 KB, and the reindex worker (its text) and a metadata change (its metadata) need a sliver of
//! it. serde skips what a struct does not name without allocating for it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::metadata_json;

#[derive(Deserialize)]
struct TextOnly {
    #[serde(default)]
    utterances: Vec<UtteranceText>,
}

#[derive(Deserialize)]
struct UtteranceText {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct MetadataOnly {
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

/// The text the search index holds: the utterances in order, one per line.
pub fn stored_text(bytes: &[u8]) -> Result<String, serde_json::Error> {
    let parsed: TextOnly = serde_json::from_slice(bytes)?;
    let texts: Vec<String> = parsed.utterances.into_iter().flat_map(|u| u.text).collect();
    Ok(texts.join("\n"))
}

/// The transcript's metadata, every value as text.
pub fn stored_metadata(bytes: &[u8]) -> Result<BTreeMap<String, String>, serde_json::Error> {
    let parsed: MetadataOnly = serde_json::from_slice(bytes)?;
    Ok(parsed
        .metadata
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            (k, text)
        })
        .collect())
}

/// The transcript with its metadata and `last_modified` replaced, everything else as it was. Only the
/// top level is taken apart: every other member is copied as the bytes it was (a tree of the utterances
/// and words, built and freed, cost the metadata worker most of its time).
pub fn with_metadata(
    bytes: &[u8],
    metadata: &BTreeMap<String, String>,
    last_modified: &str,
) -> Result<Vec<u8>, serde_json::Error> {
    with_members(
        bytes,
        [
            ("metadata", metadata_json(metadata)),
            ("last_modified", Value::from(last_modified)),
        ],
    )
}

/// The transcript with the top-level `members` set, replacing those of the same names, everything else
/// copied as the bytes it was.
pub fn with_members<const N: usize>(
    bytes: &[u8],
    members: [(&str, Value); N],
) -> Result<Vec<u8>, serde_json::Error> {
    let mut all: BTreeMap<String, &RawValue> = serde_json::from_slice(bytes)?;
    let raw = members
        .into_iter()
        .map(|(name, value)| Ok((name, serde_json::value::to_raw_value(&value)?)))
        .collect::<Result<Vec<_>, serde_json::Error>>()?;
    for (name, value) in &raw {
        all.insert((*name).to_string(), value);
    }
    serde_json::to_vec(&all)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_parts_read_alone_are_those_of_the_whole_tree() {
        let transcript = json!({
            "tId": "t1",
            "last_modified": "2026-11-20T10:15:00.000Z",
            "utterances": [
                {"speaker": "agent", "start": 0, "end": 1, "text": "hello there",
                 "words": [{"word": "hello", "start": 0, "end": 0.5}]},
                {"speaker": "client", "start": 1, "end": 2},
                {"speaker": "client", "start": 2, "end": 3, "text": "hi"}
            ],
            "metadata": {"queue": "billing", "score": 7, "flag": true}
        });
        let bytes = serde_json::to_vec(&transcript).unwrap();
        assert_eq!(stored_text(&bytes).unwrap(), "hello there\nhi");
        let metadata = stored_metadata(&bytes).unwrap();
        assert_eq!(metadata["queue"], "billing");
        assert_eq!(metadata["score"], "7");
        assert_eq!(metadata["flag"], "true");

        let mut changed = metadata.clone();
        changed.remove("flag");
        changed.insert("region".into(), "south".into());
        let written = with_metadata(&bytes, &changed, "2026-11-21T00:00:00.000Z").unwrap();
        let back: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(
            back["metadata"],
            json!({"queue": "billing", "score": "7", "region": "south"})
        );
        assert_eq!(back["last_modified"], "2026-11-21T00:00:00.000Z");
        assert_eq!(back["utterances"], transcript["utterances"]);
        assert_eq!(back["tId"], "t1");

        assert!(with_metadata(b"[1]", &changed, "2026-11-21T00:00:00.000Z").is_err());

        let bare = br#"{"tId": "t2"}"#;
        assert_eq!(stored_text(bare).unwrap(), "");
        assert!(stored_metadata(bare).unwrap().is_empty());
        assert!(stored_text(b"[1]").is_err());
    }
}
