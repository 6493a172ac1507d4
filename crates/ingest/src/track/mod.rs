//! A tracking batch from body to rows: read as it streams (`body`, with `form` and `batch`), checked event by event (`validate`, `timestamp`),
//! enriched, and the answer every `/track` call gets (`TrackResponse`), which says per event whether it
//! was stored and why not.

pub mod batch;
pub mod body;
pub mod form;
pub mod schema;
pub mod timestamp;
pub mod validate;

use std::net::IpAddr;

use serde::Serialize;
use serde_json::Value;

use crate::enrich::Enricher;
use crate::model::NewEvent;
use validate::{EventError, SessionIp, TimeRules};

/// The answer to every `/track` call, always with HTTP status 200.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TrackResponse {
    pub results: TrackResults,
    /// True when every event of the batch is stored (duplicates included); false when any event or the
    /// whole batch was refused, or the batch could not be stored.
    pub status: bool,
    /// The events the batch held (0 when the body could not be read).
    pub events_count: usize,
    /// The API version of the path, `"3"` or `"2"`.
    pub version: String,
}

#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct TrackResults {
    /// Events stored by this call.
    pub stored: usize,
    /// Events not stored again because their `insert_id` was stored within the deduplication window.
    pub duplicates: usize,
    /// Events refused by a rule; each broken rule is in `failed_events`.
    pub rejected: usize,
    /// Every broken rule: the event's index in the batch, the field, what is wrong.
    pub failed_events: Vec<EventError>,
    /// Why the whole batch was refused or not stored; absent when it was processed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether sending the same batch again may succeed (the failure was the service's, not the
    /// batch's). Present only with `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<bool>,
}

impl TrackResponse {
    /// A batch refused whole: nothing of it was stored.
    pub fn refused(
        version: &str,
        events_count: usize,
        error: String,
        retry: bool,
    ) -> TrackResponse {
        TrackResponse {
            results: TrackResults {
                error: Some(error),
                retry: Some(retry),
                ..TrackResults::default()
            },
            status: false,
            events_count,
            version: version.to_string(),
        }
    }
}

/// What the checked batch holds: the events to write, in order, and the rules they broke.
pub struct Checked {
    pub events: Vec<NewEvent>,
    pub failed: Vec<EventError>,
    pub rejected: usize,
}

/// Checks and enriches every event of a batch for the project `app_key`; `client` is the sender's
/// address, used for the place when an event has no `session_ip`.
pub fn check(
    app_key: &str,
    events: Vec<Value>,
    rules: TimeRules,
    client: Option<IpAddr>,
    enricher: &Enricher,
) -> Checked {
    let mut checked = Checked {
        events: Vec::with_capacity(events.len()),
        failed: Vec::new(),
        rejected: 0,
    };
    for (index, event) in events.into_iter().enumerate() {
        match validate::validate(index, event, rules) {
            Ok(event) => {
                let agent = event
                    .session_dua
                    .as_deref()
                    .map(|ua| enricher.agent(ua))
                    .unwrap_or_default();
                let ip = match event.session_ip {
                    SessionIp::Given(ip) => Some(ip),
                    SessionIp::Absent => client,
                    SessionIp::Suppressed => None,
                };
                let place = ip.and_then(|ip| enricher.locate(ip)).unwrap_or_default();
                checked.events.push(NewEvent {
                    app_key: app_key.to_string(),
                    time_ms: event.time_ms,
                    event_name: event.event_name,
                    user_id: event.user_id,
                    received_ms: rules.now_ms,
                    insert_id: event.insert_id,
                    session_dua: event.session_dua,
                    ip: ip.map(|ip| ip.to_string()),
                    browser: agent.browser,
                    browser_version: agent.browser_version,
                    os: agent.os,
                    device_type: agent.device_type,
                    city: place.city,
                    state: place.state,
                    country: place.country,
                    properties: Value::Object(event.properties).to_string(),
                });
            }
            Err(errors) => {
                checked.rejected += 1;
                checked.failed.extend(errors);
            }
        }
    }
    checked
}
