//! A deadline on every request body: `body_timeout` from the request's head, plus a second for each
//! `body_min_rate` bytes received. A sender trickling its body holds a connection, a buffer and a
//! handler for as long as it likes otherwise; `client_request_timeout` covers only the head. Past the
//! deadline the body ends in an error, which the handler answers as a body that could not be read; an
//! error answer is then replaced by 408 in the service's format, and the connection is closed (its body
//! is left unread).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web::{self, Bytes};
use actix_web::HttpMessage;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

use super::limits::{ErrorAnswer, HttpLimits};
use super::metrics::HttpMetrics;

/// What the middleware needs of the server: its limits and its error format.
pub(crate) struct BodyRules {
    pub limits: HttpLimits,
    pub answer: ErrorAnswer,
}

/// Middleware: puts the deadline on the request's body.
pub(crate) async fn limit(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let Some(rules) = req.app_data::<web::Data<BodyRules>>().cloned() else {
        return Ok(next.call(req).await?.map_into_left_body());
    };
    let expired = Rc::new(Cell::new(false));
    match req.take_payload() {
        Payload::None => {}
        body => {
            let timed = Deadline::new(body, &rules.limits, expired.clone());
            let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(timed);
            req.set_payload(Payload::from(stream));
        }
    }
    let response = next.call(req).await?;
    if !expired.get() {
        return Ok(response.map_into_left_body());
    }
    if let Some(metrics) = response.request().app_data::<web::Data<HttpMetrics>>() {
        metrics.body_timeouts.inc();
    }
    if !(response.status().is_client_error() || response.status().is_server_error()) {
        // The handler answered as its API answers a broken body (`/track`: 200 with the error).
        return Ok(response.map_into_left_body());
    }
    let (req, _) = response.into_parts();
    let answer = (rules.answer)(StatusCode::REQUEST_TIMEOUT, timed_out(&rules.limits));
    Ok(ServiceResponse::new(req, answer).map_into_right_body())
}

fn timed_out(limits: &HttpLimits) -> String {
    format!(
        "the request body did not arrive in time ({} s, plus one for every {} bytes received)",
        limits.body_timeout.as_secs(),
        limits.body_min_rate
    )
}

/// A body that ends in an error once its deadline passes.
struct Deadline {
    body: Payload,
    sleep: Pin<Box<Sleep>>,
    started: Instant,
    timeout: Duration,
    rate: u64,
    received: u64,
    expired: Rc<Cell<bool>>,
    message: String,
}

impl Deadline {
    fn new(body: Payload, limits: &HttpLimits, expired: Rc<Cell<bool>>) -> Deadline {
        let started = Instant::now();
        Deadline {
            body,
            sleep: Box::pin(tokio::time::sleep_until(started + limits.body_timeout)),
            started,
            timeout: limits.body_timeout,
            rate: limits.body_min_rate.max(1),
            received: 0,
            expired,
            message: timed_out(limits),
        }
    }
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.expired.get() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.body).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.received += chunk.len() as u64;
                let earned = Duration::from_secs_f64(this.received as f64 / this.rate as f64);
                let deadline = this.started + this.timeout + earned;
                this.sleep.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(other) => Poll::Ready(other),
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.expired.set(true);
                    let error =
                        std::io::Error::new(std::io::ErrorKind::TimedOut, this.message.clone());
                    Poll::Ready(Some(Err(PayloadError::Io(error))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}
