//! `POST /v3/<app_key>/track` and `POST /v2/<app_key>/track`: a batch of events, answered with HTTP 200
//! whatever happens (docs/ingest-api.md, Sending events). Both paths read every body form; the valid
//! events of a batch are stored before the answer, the invalid ones are listed in it.

use std::net::IpAddr;

use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;

use crate::config::canonical;
use crate::sink::WriteError;
use crate::state::IngestState;
use crate::track::validate::TimeRules;
use crate::track::{self, TrackResponse, TrackResults};

#[utoipa::path(post, path = "/v3/{app_key}/track", tag = "track",
    params(("app_key" = String, Path, description = "The project's app key")),
    request_body(
        description = "A form field `events` holding the batch as JSON text, the URL-encoded JSON object \
            {\"events\": [...]} as the whole form body, or the JSON object itself; any of them \
            gzip-compressed (Content-Encoding: gzip). At most 300 events.",
        content(
            (crate::track::schema::TrackForm = "application/x-www-form-urlencoded"),
            (crate::track::schema::TrackBatch = "application/json"),
        )),
    responses((status = 200, description = "What was stored and what was refused", body = TrackResponse)))]
pub async fn track_v3(
    state: web::Data<IngestState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Payload,
) -> HttpResponse {
    answer(track(&state, &req, &path, body, "3").await)
}

#[utoipa::path(post, path = "/v2/{app_key}/track", tag = "track",
    params(("app_key" = String, Path, description = "The project's app key")),
    request_body(
        description = "The JSON object {\"events\": [...]}, or any form of the v3 path.",
        content(
            (crate::track::schema::TrackBatch = "application/json"),
            (crate::track::schema::TrackForm = "application/x-www-form-urlencoded"),
        )),
    responses((status = 200, description = "What was stored and what was refused", body = TrackResponse)))]
pub async fn track_v2(
    state: web::Data<IngestState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Payload,
) -> HttpResponse {
    answer(track(&state, &req, &path, body, "2").await)
}

fn answer(response: TrackResponse) -> HttpResponse {
    HttpResponse::Ok().json(response)
}

async fn track(
    state: &IngestState,
    req: &HttpRequest,
    app_key: &str,
    body: web::Payload,
    version: &str,
) -> TrackResponse {
    let now_ms = chrono::Utc::now().timestamp_millis();
    // The project first: a body sent to no project is never read, let alone inflated.
    let project = match state.project(app_key).await {
        Ok(Some(project)) => project,
        Ok(None) => {
            return TrackResponse::refused(
                version,
                0,
                format!("unknown app key {app_key:?}: nothing was stored"),
                false,
            )
        }
        Err(e) => {
            tracing::error!(error = %e, "looking up a project failed");
            return TrackResponse::refused(
                version,
                0,
                "the project could not be looked up just now; nothing was stored, send the batch again"
                    .into(),
                true,
            );
        }
    };
    let body = match read_body(req, body, state.config.max_body_bytes).await {
        Ok(body) => body,
        Err(message) => return TrackResponse::refused(version, 0, message, false),
    };
    let gzip = req
        .headers()
        .get(actix_web::http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"));
    let max_inflated = state.config.max_inflated_bytes;
    // Inflating and parsing take up to a few tens of milliseconds: off the thread serving requests.
    let read = web::block(move || track::body::events(&body, gzip, max_inflated)).await;
    let events = match read {
        Ok(Ok(events)) => events,
        Ok(Err(refused)) => {
            return TrackResponse::refused(version, refused.events, refused.message, false)
        }
        Err(e) => {
            tracing::error!(error = %e, "reading a batch failed");
            return TrackResponse::refused(
                version,
                0,
                "the batch could not be read just now; nothing was stored, send it again".into(),
                true,
            );
        }
    };
    let count = events.len();
    if !state.limit.take(&project.app_key, count) {
        return TrackResponse::refused(
            version,
            count,
            format!(
                "the project's limit of {} events per second is reached; nothing was stored, send the batch again in a moment",
                state.config.rate_limit_events_per_sec
            ),
            true,
        );
    }
    let rules = TimeRules {
        now_ms,
        future_margin_ms: state.config.future_margin_secs * 1000,
        server_time: project.server_time,
        retention_days: state.config.retention_days,
    };
    let checked = track::check(
        &project.app_key,
        events,
        rules,
        client_address(state, req),
        &state.enricher,
    );
    let mut results = TrackResults {
        rejected: checked.rejected,
        failed_events: checked.failed,
        ..TrackResults::default()
    };
    match state.sink.write(checked.events, now_ms).await {
        Ok(fresh) => {
            results.stored = fresh.iter().filter(|f| **f).count();
            results.duplicates = fresh.len() - results.stored;
        }
        Err(WriteError::Unavailable(message)) => {
            results.error = Some(message);
            results.retry = Some(true);
        }
        Err(WriteError::ProjectGone) => {
            results.error = Some(format!(
                "unknown app key {app_key:?}: the project was deleted; nothing was stored"
            ));
            results.retry = Some(false);
        }
    }
    TrackResponse {
        status: results.error.is_none() && results.rejected == 0,
        results,
        events_count: count,
        version: version.to_string(),
    }
}

/// The body as sent, or a message when it is larger than `limit` bytes (refused by its declared
/// length before any of it is read) or breaks off.
async fn read_body(
    req: &HttpRequest,
    mut body: web::Payload,
    limit: usize,
) -> Result<Vec<u8>, String> {
    let too_large = || {
        format!(
            "the body is larger than {limit} bytes, the service's limit; send smaller batches or gzip them"
        )
    };
    let declared = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| format!("the body could not be read: {e}"))?;
        if bytes.len() + chunk.len() > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The sender's address: the connection's peer, or, when the peer is a trusted proxy, the last address
/// of `X-Forwarded-For` that is not one (walking back from the peer through trusted hops only).
pub fn client_address(state: &IngestState, req: &HttpRequest) -> Option<IpAddr> {
    let peer = canonical(req.peer_addr()?.ip());
    let trusted = |ip: IpAddr| state.proxies.iter().any(|n| n.contains(ip));
    if !trusted(peer) {
        return Some(peer);
    }
    let forwarded: Vec<IpAddr> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|hop| hop.trim().parse::<IpAddr>().map(canonical))
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    let mut client = peer;
    for hop in forwarded.iter().rev() {
        client = *hop;
        if !trusted(*hop) {
            break;
        }
    }
    Some(client)
}
