//! Changes of a call's metadata, apart from the HTTP requests that ask for them: checked requests are
//! committed together (`batch`, by the types of `request`), and each answers the call's whole metadata
//! with a `last_modified` that moves on with every change.

pub mod batch;
pub mod request;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use analytics_store::CallRow;

/// The next `last_modified`: now, or a millisecond after the previous one if the clock has not moved on.
pub fn next_last_modified(previous: &str) -> String {
    let now = Utc::now();
    // Compared in whole milliseconds, as written: two requests of one batch come within one.
    let next = match DateTime::parse_from_rfc3339(previous) {
        Ok(prev) if prev.timestamp_millis() >= now.timestamp_millis() => {
            prev.with_timezone(&Utc) + Duration::milliseconds(1)
        }
        _ => now,
    };
    common::time::rfc3339(next)
}

/// The call's metadata as the API answers it: the transcript's own fields, then every metadata field.
pub fn metadata_answer(row: &CallRow, metadata: &BTreeMap<String, String>) -> Map<String, Value> {
    let mut answer = Map::new();
    answer.insert("tId".into(), Value::String(row.id.clone()));
    answer.insert("datetime".into(), Value::String(row.datetime.clone()));
    answer.insert(
        "last_modified".into(),
        Value::String(row.last_modified.clone()),
    );
    answer.insert("filename".into(), Value::String(row.filename.clone()));
    answer.insert("agent_id".into(), Value::String(row.agent_id.clone()));
    for (field, value) in metadata {
        answer.insert(field.clone(), Value::String(value.clone()));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests within one millisecond still get distinct, increasing times.
    #[test]
    fn last_modified_moves_on_by_a_millisecond_within_one() {
        let mut previous = next_last_modified("");
        for _ in 0..1000 {
            let next = next_last_modified(&previous);
            assert!(next > previous, "{next} after {previous}");
            previous = next;
        }
    }
}
