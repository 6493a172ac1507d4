//! The rules one tracking event must pass to be stored (docs/ingest-api.md, Events): the required fields
//! of the specification, one of the accepted time formats no further ahead than the configured margin,
//! and flat custom properties of strings and numbers. Every broken rule of an event is reported, each
//! with the field it is about, so a sender can fix a batch in one go.

use std::net::IpAddr;

use serde::Serialize;
use serde_json::{Map, Value};

use super::timestamp;

pub const EVENT_NAME: &str = "event_name";
pub const USER_ID: &str = "user_id";
pub const TIME: &str = "event_timestamp_epoch";
pub const SESSION_DUA: &str = "session_dua";
pub const SESSION_IP: &str = "session_ip";
pub const INSERT_ID: &str = "insert_id";

/// The fields with a meaning of their own; every other field is a custom property.
pub const KNOWN_FIELDS: [&str; 6] = [
    EVENT_NAME,
    USER_ID,
    TIME,
    SESSION_DUA,
    SESSION_IP,
    INSERT_ID,
];

pub const MAX_NAME_CHARS: usize = 255;
pub const MAX_INSERT_ID_CHARS: usize = 128;
pub const MAX_USER_AGENT_CHARS: usize = 2048;
pub const MAX_PROPERTIES: usize = 255;
pub const MAX_PROPERTY_VALUE_CHARS: usize = 8192;
/// Text columns cannot hold the NUL character (PostgreSQL refuses it), so no stored field may.
const NUL: &str = "must not contain the NUL character (\\u0000)";
/// Events before this instant (2000-01-01T00:00:00Z) are refused: no real sender has them, and each
/// month of events is a partition of its own.
pub const EARLIEST_MS: i64 = 946_684_800_000;

/// What the project and the moment decide about event times.
#[derive(Debug, Clone, Copy)]
pub struct TimeRules {
    /// Now, in epoch milliseconds: the server time of the batch.
    pub now_ms: i64,
    /// How far ahead of now an event may be.
    pub future_margin_ms: i64,
    /// The project overrides event time with server time: a supplied time is ignored.
    pub server_time: bool,
    /// Days events are kept: an older time is refused (`crate::retention`); 0 keeps them for ever.
    pub retention_days: u32,
}

/// Where an event's place comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionIp {
    /// No `session_ip`: the client's address is used.
    Absent,
    /// `session_ip` = `0`: no address is used, not even the client's.
    Suppressed,
    Given(IpAddr),
}

/// An event that passed every rule, split into its known fields and its custom properties.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidEvent {
    pub event_name: String,
    pub user_id: String,
    pub time_ms: i64,
    pub insert_id: Option<String>,
    pub session_dua: Option<String>,
    pub session_ip: SessionIp,
    pub properties: Map<String, Value>,
}

/// One broken rule of one event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct EventError {
    /// The event's position in the batch, from 0.
    pub index: usize,
    /// The field the rule is about; absent when the event as a whole is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

/// Checks the event at `index` of a batch.
pub fn validate(
    index: usize,
    event: Value,
    rules: TimeRules,
) -> Result<ValidEvent, Vec<EventError>> {
    let Value::Object(mut fields) = event else {
        return Err(vec![EventError {
            index,
            field: None,
            message: format!("an event is a JSON object, got {}", kind(&event)),
        }]);
    };
    let mut errors = Vec::new();
    let mut fail = |field: &str, message: String| {
        errors.push(EventError {
            index,
            field: Some(field.to_string()),
            message,
        })
    };

    let event_name = match fields.remove(EVENT_NAME) {
        None | Some(Value::Null) => {
            fail(EVENT_NAME, "is required".into());
            None
        }
        Some(value) => name(value, MAX_NAME_CHARS)
            .map_err(|m| fail(EVENT_NAME, m))
            .ok(),
    };
    let user_id = match fields.remove(USER_ID) {
        None | Some(Value::Null) => {
            fail(USER_ID, "is required (an anonymous id will do)".into());
            None
        }
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Some(value) => name(value, MAX_NAME_CHARS)
            .map_err(|m| fail(USER_ID, m))
            .ok(),
    };
    let supplied_time = fields.remove(TIME);
    let time_ms = if rules.server_time {
        Some(rules.now_ms)
    } else {
        match supplied_time {
            None | Some(Value::Null) => {
                fail(TIME, "is required (epoch milliseconds)".into());
                None
            }
            Some(value) => match timestamp::parse(&value) {
                Err(message) => {
                    fail(TIME, message);
                    None
                }
                Ok(ms) if ms > rules.now_ms + rules.future_margin_ms => {
                    fail(
                        TIME,
                        format!(
                            "{} is more than {} s ahead of the server's clock",
                            iso(ms),
                            rules.future_margin_ms / 1000
                        ),
                    );
                    None
                }
                Ok(ms) if ms < EARLIEST_MS => {
                    fail(TIME, format!("{} is before 2000-01-01", iso(ms)));
                    None
                }
                Ok(ms)
                    if crate::retention::oldest_accepted_ms(rules.now_ms, rules.retention_days)
                        .is_some_and(|oldest| ms < oldest) =>
                {
                    fail(
                        TIME,
                        format!(
                            "{} is older than the {} days events are kept",
                            iso(ms),
                            rules.retention_days
                        ),
                    );
                    None
                }
                Ok(ms) => Some(ms),
            },
        }
    };
    let insert_id = match fields.remove(INSERT_ID) {
        None | Some(Value::Null) => None,
        Some(value) => name(value, MAX_INSERT_ID_CHARS)
            .map_err(|m| fail(INSERT_ID, m))
            .ok(),
    };
    let session_dua = match fields.remove(SESSION_DUA) {
        None | Some(Value::Null) => None,
        Some(Value::String(ua)) if ua.contains('\0') => {
            fail(SESSION_DUA, NUL.into());
            None
        }
        Some(Value::String(ua)) if ua.chars().count() <= MAX_USER_AGENT_CHARS => Some(ua),
        Some(Value::String(_)) => {
            fail(
                SESSION_DUA,
                format!("is longer than {MAX_USER_AGENT_CHARS} characters"),
            );
            None
        }
        Some(other) => {
            fail(
                SESSION_DUA,
                format!("must be a string, got {}", kind(&other)),
            );
            None
        }
    };
    let session_ip = match fields.remove(SESSION_IP) {
        None | Some(Value::Null) => SessionIp::Absent,
        Some(Value::Number(n)) if n.as_u64() == Some(0) => SessionIp::Suppressed,
        Some(Value::String(text)) if text.trim() == "0" => SessionIp::Suppressed,
        Some(Value::String(text)) => match text.trim().parse::<IpAddr>() {
            Ok(ip) => SessionIp::Given(crate::config::canonical(ip)),
            Err(_) => {
                fail(
                    SESSION_IP,
                    format!("{text:?} is not an IPv4 or IPv6 address (or 0)"),
                );
                SessionIp::Absent
            }
        },
        Some(other) => {
            fail(
                SESSION_IP,
                format!("must be an address as a string, got {}", kind(&other)),
            );
            SessionIp::Absent
        }
    };

    if fields.len() > MAX_PROPERTIES {
        fail(
            "properties",
            // Only so many are read (`batch`): the count past them is unknown.
            format!("more than {MAX_PROPERTIES} custom properties; at most {MAX_PROPERTIES}"),
        );
    }
    for (key, value) in &fields {
        if key.is_empty() || key.chars().count() > MAX_NAME_CHARS {
            fail(
                key,
                format!("a property name has 1 to {MAX_NAME_CHARS} characters"),
            );
            continue;
        }
        match value {
            Value::String(s) if s.chars().count() > MAX_PROPERTY_VALUE_CHARS => fail(
                key,
                format!("is longer than {MAX_PROPERTY_VALUE_CHARS} characters"),
            ),
            Value::String(_) | Value::Number(_) => {}
            Value::Object(_) | Value::Array(_) => fail(
                key,
                format!(
                    "is {}: properties are flat, nested JSON is unsupported",
                    kind(value)
                ),
            ),
            Value::Bool(_) | Value::Null => fail(
                key,
                format!("must be a string or a number, got {}", kind(value)),
            ),
        }
    }

    match (event_name, user_id, time_ms) {
        (Some(event_name), Some(user_id), Some(time_ms)) if errors.is_empty() => Ok(ValidEvent {
            event_name,
            user_id,
            time_ms,
            insert_id,
            session_dua,
            session_ip,
            properties: fields,
        }),
        _ => Err(errors),
    }
}

/// A required name: a non-empty string of at most `max` characters.
fn name(value: Value, max: usize) -> Result<String, String> {
    match value {
        Value::String(s) if s.trim().is_empty() => Err("must not be empty".into()),
        Value::String(s) if s.contains('\0') => Err(NUL.into()),
        Value::String(s) if s.chars().count() > max => {
            Err(format!("is longer than {max} characters"))
        }
        Value::String(s) => Ok(s),
        other => Err(format!("must be a string, got {}", kind(&other))),
    }
}

/// The JSON type of a value, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(common::time::rfc3339)
        .unwrap_or_else(|| ms.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NOW: i64 = 1_795_428_000_000; // 2026-11-23T10:00:00Z

    fn rules() -> TimeRules {
        TimeRules {
            now_ms: NOW,
            future_margin_ms: 3_600_000,
            server_time: false,
            retention_days: 0,
        }
    }

    fn errors(event: Value) -> Vec<(Option<String>, String)> {
        validate(4, event, rules())
            .expect_err("invalid")
            .into_iter()
            .map(|e| {
                assert_eq!(e.index, 4);
                (e.field, e.message)
            })
            .collect()
    }

    fn fields(errors: &[(Option<String>, String)]) -> Vec<&str> {
        errors
            .iter()
            .map(|(f, _)| f.as_deref().unwrap_or("-"))
            .collect()
    }

    #[test]
    fn a_complete_event_splits_into_fields_and_properties() {
        let event = validate(
            0,
            json!({"event_name": "call_started", "user_id": "u-1",
                   "event_timestamp_epoch": NOW - 1000, "session_dua": "Mozilla/5.0",
                   "session_ip": "81.2.69.142", "insert_id": "abc", "queue": "billing", "score": 4.5}),
            rules(),
        )
        .expect("valid");
        assert_eq!(event.event_name, "call_started");
        assert_eq!(event.user_id, "u-1");
        assert_eq!(event.time_ms, NOW - 1000);
        assert_eq!(event.insert_id.as_deref(), Some("abc"));
        assert_eq!(event.session_dua.as_deref(), Some("Mozilla/5.0"));
        assert_eq!(
            event.session_ip,
            SessionIp::Given("81.2.69.142".parse().unwrap())
        );
        assert_eq!(
            Value::Object(event.properties),
            json!({"queue": "billing", "score": 4.5})
        );
    }

    #[test]
    fn missing_mandatory_fields_are_each_reported() {
        let found = errors(json!({"queue": "billing"}));
        assert_eq!(fields(&found), [EVENT_NAME, USER_ID, TIME]);
        assert!(found[0].1.contains("required"));
    }

    #[test]
    fn numeric_user_ids_are_kept_as_text() {
        let event = validate(
            0,
            json!({"event_name": "e", "user_id": 42, "event_timestamp_epoch": NOW}),
            rules(),
        )
        .unwrap();
        assert_eq!(event.user_id, "42");
        assert_eq!(
            fields(&errors(
                json!({"event_name": "e", "user_id": 4.2, "event_timestamp_epoch": NOW})
            )),
            [USER_ID]
        );
    }

    #[test]
    fn wrong_types_empty_and_long_values_are_refused() {
        let found = errors(
            json!({"event_name": "", "user_id": ["x"], "event_timestamp_epoch": NOW,
            "session_dua": 5, "session_ip": "not-an-ip", "insert_id": "i".repeat(129)}),
        );
        assert_eq!(
            fields(&found),
            [EVENT_NAME, USER_ID, INSERT_ID, SESSION_DUA, SESSION_IP]
        );
        let nul = errors(
            json!({"event_name": "a\0b", "user_id": "u", "event_timestamp_epoch": NOW,
            "session_dua": "x\0"}),
        );
        assert_eq!(fields(&nul), [EVENT_NAME, SESSION_DUA]);
        assert!(nul[0].1.contains("NUL"));
        assert_eq!(
            fields(&errors(json!("just a string"))),
            ["-"],
            "not an object"
        );
        let long = "n".repeat(256);
        assert_eq!(
            fields(&errors(
                json!({"event_name": long, "user_id": "u", "event_timestamp_epoch": NOW})
            )),
            [EVENT_NAME]
        );
    }

    #[test]
    fn properties_are_flat_strings_and_numbers() {
        let found = errors(
            json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": NOW,
            "nested": {"a": 1}, "list": [1], "flag": true, "nothing": null, "fine": "yes", "n": 3}),
        );
        let mut named = fields(&found);
        named.sort();
        assert_eq!(named, ["flag", "list", "nested", "nothing"]);
        assert!(found.iter().any(
            |(f, m)| f.as_deref() == Some("nested") && m.contains("nested JSON is unsupported")
        ));
    }

    #[test]
    fn times_ahead_of_the_margin_or_before_2000_are_refused() {
        let at = |ms: i64| json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": ms});
        assert!(
            validate(0, at(NOW + 3_600_000), rules()).is_ok(),
            "at the margin"
        );
        let ahead = errors(at(NOW + 3_600_001));
        assert_eq!(fields(&ahead), [TIME]);
        assert!(ahead[0].1.contains("ahead"), "{ahead:?}");
        let before = json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": "1999-12-31T23:59:59"});
        assert!(errors(before)[0].1.contains("before 2000"));
        let first =
            json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": "2000-01-01"});
        assert_eq!(validate(0, first, rules()).unwrap().time_ms, EARLIEST_MS);
    }

    #[test]
    fn times_older_than_the_retention_are_refused() {
        let at = |ms: i64| json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": ms});
        let kept = TimeRules {
            retention_days: 30,
            ..rules()
        };
        assert!(
            validate(0, at(NOW - 30 * 86_400_000), kept).is_ok(),
            "the oldest kept"
        );
        let too_old = validate(0, at(NOW - 30 * 86_400_000 - 1), kept).unwrap_err();
        assert_eq!(too_old.len(), 1);
        assert_eq!(too_old[0].field.as_deref(), Some(TIME));
        assert!(
            too_old[0]
                .message
                .contains("older than the 30 days events are kept"),
            "{too_old:?}"
        );
        // Server time is always within it.
        let server = TimeRules {
            server_time: true,
            ..kept
        };
        assert!(validate(0, at(NOW - 90 * 86_400_000), server).is_ok());
    }

    #[test]
    fn server_time_replaces_and_ignores_the_supplied_time() {
        let server = TimeRules {
            server_time: true,
            ..rules()
        };
        for supplied in [json!("garbage"), json!(NOW - 86_400_000), Value::Null] {
            let event = validate(
                0,
                json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": supplied}),
                server,
            )
            .expect("valid");
            assert_eq!(event.time_ms, NOW);
            assert!(!event.properties.contains_key(TIME));
        }
        let without = validate(0, json!({"event_name": "e", "user_id": "u"}), server).unwrap();
        assert_eq!(without.time_ms, NOW);
    }

    #[test]
    fn session_ip_zero_suppresses_the_address() {
        for zero in [json!("0"), json!(0)] {
            let event = validate(
                0,
                json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": NOW, "session_ip": zero}),
                rules(),
            )
            .unwrap();
            assert_eq!(event.session_ip, SessionIp::Suppressed);
        }
        let mapped = validate(
            0,
            json!({"event_name": "e", "user_id": "u", "event_timestamp_epoch": NOW, "session_ip": "::ffff:81.2.69.142"}),
            rules(),
        )
        .unwrap();
        assert_eq!(
            mapped.session_ip,
            SessionIp::Given("81.2.69.142".parse().unwrap())
        );
    }
}
