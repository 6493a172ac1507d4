//! The connection limit of one server. Every accepted connection is counted; up to `max_connections`
//! they are served, the next `reserved_connections` may only ask the operational endpoints (anything
//! else is answered 503 and the connection closed), and past those a connection is answered 503 and
//! closed as it is accepted, so the file descriptors held stay below the process's limit. A server
//! that only stopped accepting would leave `/healthz` waiting in the listen queue behind the very
//! connections that filled it.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Extensions, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web;
use prometheus::{IntCounterVec, IntGauge};

use super::limits::ErrorAnswer;

/// The paths a reserved connection may ask.
const OPERATIONAL: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// What a connection past every limit is told before it is closed.
const REFUSED: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\n\
content-type: text/plain\r\ncontent-length: 43\r\n\r\nthe service is at its connection limit now\n";

/// The connections of one server, counted across its workers.
pub(crate) struct Gate {
    open: AtomicUsize,
    max: usize,
    reserved: usize,
    gauge: IntGauge,
    refused: IntCounterVec,
    pub answer: ErrorAnswer,
}

impl Gate {
    pub fn new(
        max: usize,
        reserved: usize,
        gauge: IntGauge,
        refused: IntCounterVec,
        answer: ErrorAnswer,
    ) -> Gate {
        Gate {
            open: AtomicUsize::new(0),
            max,
            reserved,
            gauge,
            refused,
            answer,
        }
    }

    /// The server's `on_connect`: counts the connection for as long as it is open (its slot lives in
    /// the connection's data) and closes it at once when even the reserve is full.
    pub fn on_connect(self: &Arc<Gate>, io: &dyn Any, data: &mut Extensions) {
        let open = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.gauge.inc();
        data.insert(Slot {
            gate: self.clone(),
            reserved: open > self.max,
        });
        if open > self.max + self.reserved {
            self.refused.with_label_values(&["closed"]).inc();
            if let Some(stream) = io.downcast_ref::<tokio::net::TcpStream>() {
                // Best effort: a client that sends its request anyway may see a reset instead.
                let _ = rustix::net::send(stream, REFUSED, rustix::net::SendFlags::NOSIGNAL);
                let _ = rustix::net::shutdown(stream, rustix::net::Shutdown::Both);
            }
        }
    }
}

/// A connection's place in its server's count, given back when the connection closes.
struct Slot {
    gate: Arc<Gate>,
    /// Past `max_connections`: for the operational endpoints only.
    reserved: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.gate.open.fetch_sub(1, Ordering::Relaxed);
        self.gate.gauge.dec();
    }
}

/// Middleware: a request on a reserved connection for anything but the operational endpoints is
/// answered 503 and its connection closed.
pub(crate) async fn reserve(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let reserved = req.conn_data::<Slot>().is_some_and(|slot| slot.reserved);
    if !reserved || OPERATIONAL.contains(&req.path()) {
        return Ok(next.call(req).await?.map_into_left_body());
    }
    let Some(gate) = req.app_data::<web::Data<Arc<Gate>>>().cloned() else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    gate.refused.with_label_values(&["reserved"]).inc();
    let mut answer = (gate.answer)(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "the service is at its limit of {} connections; try again in a moment",
            gate.max
        ),
    );
    answer
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    answer
        .head_mut()
        .set_connection_type(actix_web::http::ConnectionType::Close);
    Ok(req.into_response(answer).map_into_right_body())
}
