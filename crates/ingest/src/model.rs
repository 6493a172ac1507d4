//! The records of the ingestion service: projects (app keys of a company) and events as stored.

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A project: the app key that senders put in the `/track` path, owned by one company.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow, utoipa::ToSchema)]
pub struct Project {
    /// 32 lowercase hex characters, made by the service.
    pub app_key: String,
    pub company: String,
    pub name: String,
    /// Event time is the server's time of arrival; a supplied time is ignored.
    pub server_time: bool,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: DateTime<Utc>,
}

/// A new app key: 128 random bits as hex. It names a project in a URL and is no secret that guards reads
/// (those need a token of the project's company), but it must not be guessable to send into a project.
pub fn new_app_key() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// An event ready to be written: validated and enriched.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub app_key: String,
    pub time_ms: i64,
    pub event_name: String,
    pub user_id: String,
    pub received_ms: i64,
    pub insert_id: Option<String>,
    pub session_dua: Option<String>,
    /// The address the place was looked up from (`session_ip`, else the client's); none with
    /// `session_ip` = `0`.
    pub ip: Option<String>,
    pub browser: Option<String>,
    pub browser_version: Option<String>,
    pub os: Option<String>,
    pub device_type: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub country: Option<String>,
    /// The custom properties as a JSON object.
    pub properties: String,
}

/// An event as read back (`GET /v3/<app_key>/events`).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct StoredEvent {
    /// The event's position in its project's order of storage; unique.
    pub id: String,
    pub event_name: String,
    pub user_id: String,
    /// Event time in epoch milliseconds (the server's time when the project overrides it).
    pub event_timestamp_epoch: i64,
    /// Event time, RFC 3339.
    pub time: String,
    /// When the service received the event, RFC 3339.
    pub received_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub insert_id: Option<String>,
    pub session_dua: Option<String>,
    pub ip: Option<String>,
    pub browser: Option<String>,
    pub browser_version: Option<String>,
    pub os: Option<String>,
    pub device_type: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub country: Option<String>,
    /// The custom properties, flat.
    #[schema(value_type = Object)]
    pub properties: Map<String, Value>,
    #[serde(skip)]
    pub seq: i64,
}

/// The first instant of a month in UTC, by which events are grouped (PostgreSQL partitions, retention);
/// None for a month chrono cannot represent.
pub fn month_start(year: i32, month: u32) -> Option<DateTime<Utc>> {
    Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).single()
}
