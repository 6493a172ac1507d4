//! `GET /v3/<app_key>/events`: a project's stored events, oldest first, for a token of the project's
//! company with `events:read`; filtered by time range and event name, a page at a time behind an
//! cursor: the position of the last event of the previous page, `<epoch ms>-<sequence>`. Any cursor
//! of that form is a position, so a client holding one never gets a page it cannot read
//! (docs/ingest-api.md, Reading events).

use actix_web::{web, HttpRequest, HttpResponse};
use common::{ApiError, ErrorCode};
use serde::{Deserialize, Serialize};

use crate::access::{self, READ_SCOPE};
use crate::model::StoredEvent;
use crate::state::IngestState;
use crate::store::{self, EventQuery};

pub const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 1000;
/// The end of 9999 in epoch milliseconds: the `to` of a query without one (both databases hold it).
const END_OF_TIME: i64 = 253_402_300_800_000;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Events at or after this time: RFC 3339 or epoch milliseconds. Default: the earliest.
    #[param(schema_with = instant_schema)]
    pub from: Option<String>,
    /// Events before this time: RFC 3339 or epoch milliseconds. Default: no end.
    #[param(schema_with = instant_schema)]
    pub to: Option<String>,
    /// Only events of this name.
    pub event_name: Option<String>,
    /// Events per page, 1 to 1000 (default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page: the page starts after that position. Empty is the first page.
    #[param(pattern = r"^([0-9]{1,18}-[0-9]{1,18})?$")]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EventsPage {
    pub events: Vec<StoredEvent>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[utoipa::path(get, path = "/v3/{app_key}/events", tag = "events", operation_id = "list_events",
    params(("app_key" = String, Path, description = "The project's app key"), EventsQuery),
    responses(
        (status = 200, description = "A page of events", body = EventsPage),
        (status = 400, description = "A parameter is wrong", body = common::error::ErrorBody),
        (status = 401, description = "No valid token", body = common::error::ErrorBody),
        (status = 403, description = "The token lacks events:read", body = common::error::ErrorBody),
        (status = 404, description = "No such project for the token's company", body = common::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn list(
    state: web::Data<IngestState>,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let claims = access::authorize(&state, &req, READ_SCOPE).await?;
    let project = access::own_project(&state, &claims, &path).await?;
    let from_ms = match &query.from {
        Some(text) => instant("from", text)?,
        None => 0,
    };
    let to_ms = match &query.to {
        Some(text) => instant("to", text)?,
        None => END_OF_TIME,
    };
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::new(
            ErrorCode::InvalidLimit,
            format!("limit is 1 to {MAX_LIMIT}, got {limit}"),
        ));
    }
    // Sent empty, the cursor is left out: the first page.
    let after = match query.cursor.as_deref().filter(|c| !c.is_empty()) {
        Some(cursor) => decode_cursor(cursor)?,
        None => (from_ms, -1),
    };
    // Asking for one more than the page tells whether another page follows.
    let mut events = store::events(
        &state.db,
        &EventQuery {
            app_key: &project.app_key,
            from_ms,
            to_ms,
            event_name: query.event_name.as_deref(),
            after,
            limit: limit + 1,
        },
    )
    .await?;
    let next_cursor = if events.len() as i64 > limit {
        events.truncate(limit as usize);
        events
            .last()
            .map(|e| encode_cursor(e.event_timestamp_epoch, e.seq))
    } else {
        None
    };
    Ok(HttpResponse::Ok().json(EventsPage {
        events,
        next_cursor,
    }))
}

/// An RFC 3339 date-time, or epoch milliseconds as 1 to 18 digits.
fn instant_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
    use utoipa::openapi::{KnownFormat, SchemaFormat};
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[0-9]{1,18}$")),
        )
        .into()
}

/// 1 to 18 digits as a number: every such number fits an `i64`, and no sign or space is taken.
fn digits(text: &str) -> Option<i64> {
    let valid = (1..=18).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit());
    valid.then(|| text.parse().expect("at most 18 digits fit an i64"))
}

/// RFC 3339 or epoch milliseconds ([`digits`]).
fn instant(name: &str, text: &str) -> Result<i64, ApiError> {
    if let Some(ms) = digits(text) {
        return Ok(ms);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|_| {
            ApiError::field(
                name,
                format!("{name} is an RFC 3339 time or epoch milliseconds, got {text:?}"),
            )
        })
}

fn encode_cursor(time_ms: i64, seq: i64) -> String {
    format!("{time_ms}-{seq}")
}

/// `<time>-<sequence>`, each [`digits`].
fn decode_cursor(cursor: &str) -> Result<(i64, i64), ApiError> {
    let invalid = || {
        ApiError::new(
            ErrorCode::InvalidCursor,
            "cursor is a next_cursor this API gave: <epoch ms>-<sequence>",
        )
    };
    let (time, seq) = cursor.split_once('-').ok_or_else(invalid)?;
    Ok((
        digits(time).ok_or_else(invalid)?,
        digits(seq).ok_or_else(invalid)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        let cursor = encode_cursor(1_795_428_000_000, 42);
        assert_eq!(decode_cursor(&cursor).unwrap(), (1_795_428_000_000, 42));
        assert_eq!(decode_cursor("0-0").unwrap(), (0, 0));
        for bad in ["", "!!", "bm9wZQ", "1-", "-1", "1-2-3", "+1-2", "1- 2"] {
            assert_eq!(
                decode_cursor(bad).unwrap_err().code,
                ErrorCode::InvalidCursor,
                "{bad}"
            );
        }
    }

    /// The cursor's documented form is exactly what the listing reads, so a client generated from the
    /// document never sends one it refuses, nor one it takes for something else.
    #[test]
    fn the_documented_cursor_is_what_is_read() {
        let document = serde_json::to_value(crate::openapi::document()).unwrap();
        let parameters = document["paths"]["/v3/{app_key}/events"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .clone();
        let cursor = parameters.iter().find(|p| p["name"] == "cursor").unwrap();
        let pattern = regex::Regex::new(cursor["schema"]["pattern"].as_str().unwrap()).unwrap();
        let long = "1".repeat(18);
        let too_long = "1".repeat(19);
        for text in [
            "0-0".to_string(),
            encode_cursor(1_795_428_000_000, 42),
            format!("{long}-{long}"),
            format!("{too_long}-1"),
            format!("1-{too_long}"),
            "1:2".into(),
            "MTc2Mzg5MjAwMDAwMDoxNw".into(),
            "1-2\n".into(),
            " 1-2".into(),
            "1--2".into(),
        ] {
            assert_eq!(
                pattern.is_match(&text),
                decode_cursor(&text).is_ok(),
                "{text:?}"
            );
        }
        assert!(pattern.is_match(""), "empty is the first page");
    }

    #[test]
    fn instants_are_rfc3339_or_milliseconds() {
        assert_eq!(instant("from", "1795428000000").unwrap(), 1_795_428_000_000);
        assert_eq!(
            instant("from", "2026-11-23T10:00:00Z").unwrap(),
            1_795_428_000_000
        );
        for bad in ["yesterday", "", "+5", "-5", "1e3", "1234567890123456789"] {
            assert_eq!(
                instant("to", bad).unwrap_err().field.as_deref(),
                Some("to"),
                "{bad:?}"
            );
        }
    }
}
