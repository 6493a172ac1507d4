//! The callback worker: one attempt per delivery of an `analytics.callback` message. A 2xx answer ends
//! the delivery; anything else (an error status, a redirect, a timeout, a refused or unreachable
//! address) is a failed attempt, retried after a doubling wait until the request's attempt limit, then
//! the delivery is cancelled. The attempt count is the bus's delivery count, so a worker that dies
//! mid-attempt costs one attempt and the message comes back; the request's row records each outcome. A
//! delivery whose receiver is busy with as many posts as it may take (`destinations`) is put off
//! untried.

use std::sync::Arc;

use chrono::Utc;
use common::bus::Delivery;
use messages::v1::CallbackDelivery;
use messages::Message as _;

use crate::state::TranscriptionState;
use analytics_core::worker::{self, JobError};
use analytics_store::requests::{self, CALLBACK_CANCELLED, CALLBACK_DELIVERED, CALLBACK_PENDING};
use callbacks::secrets;

/// How one attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    Delivered(u16),
    Failed(String),
}

/// Posts `job` once, signed for this attempt.
pub async fn attempt(state: &TranscriptionState, job: &CallbackDelivery) -> Attempt {
    let deliverer = &state.callbacks;
    // The address was checked when the request named it; it is checked again now (the operator's
    // settings may have changed), and the client's resolver checks every address it connects to.
    let url = match deliverer.policy.parse_url(&job.url) {
        Ok(url) => url,
        Err(refused) => return Attempt::Failed(refused.to_string()),
    };
    let Some(server) = deliverer.server_key() else {
        return Attempt::Failed("the service has no key to sign callbacks with".into());
    };
    // Read at every attempt: a rotation applies to the next post of every delivery. A failed read is
    // tried again a few times before it costs the delivery an attempt.
    let mut tries = 0;
    let signing = loop {
        match secrets::signing(&state.db, server, &job.company, deliverer.secret_overlap).await {
            Ok(signing) => break signing,
            Err(e) if tries < 3 => {
                tries += 1;
                tracing::warn!(error = %e, tries, "callback secrets unreadable; reading again");
                tokio::time::sleep(std::time::Duration::from_millis(250 * tries)).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "callback secrets unreadable");
                return Attempt::Failed(
                    "the service could not read the company's callback secret".into(),
                );
            }
        }
    };
    let timestamp = Utc::now().timestamp();
    let signature = signing.sign(&job.delivery_id, timestamp, &job.body);
    let sent = deliverer
        .client
        .post(url)
        .header("content-type", &job.content_type)
        .header("webhook-id", &job.delivery_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(job.body.clone())
        .send()
        .await;
    match sent {
        Ok(answer) if answer.status().is_success() => Attempt::Delivered(answer.status().as_u16()),
        Ok(answer) => Attempt::Failed(format!("the receiver answered {}", answer.status())),
        Err(e) => Attempt::Failed(describe(&e)),
    }
}

/// A failure in words for the request's record, without the URL's query (it may hold a receiver's
/// token) and with the guard's reason when the guard refused the connection.
fn describe(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut source = e.source();
    while let Some(inner) = source {
        if let Some(refused) = inner.downcast_ref::<callbacks::guard::Refused>() {
            return refused.to_string();
        }
        source = inner.source();
    }
    if e.is_timeout() {
        "the receiver did not answer in time".into()
    } else if e.is_connect() {
        "the receiver could not be reached".into()
    } else {
        "the post failed before an answer".into()
    }
}

/// Makes one attempt of a delivery and settles its message: acknowledged when delivered or given up,
/// back on the bus after its wait otherwise.
pub async fn handle(state: Arc<TranscriptionState>, delivery: Delivery) {
    let state = state.as_ref();
    use tracing::Instrument;
    let span = common::telemetry::job_span(
        messages::topics::CALLBACK,
        delivery.message.traceparent.as_deref(),
    );
    async {
        let job = match CallbackDelivery::decode(delivery.message.body.as_slice()) {
            Ok(job) => job,
            Err(e) => {
                let reason = format!("not a CallbackDelivery: {e}");
                let outcome = Err(JobError::Poison(reason));
                worker::settle(state, messages::topics::CALLBACK, delivery, outcome).await;
                return;
            }
        };
        let Some(slot) = state.callbacks.destinations.take(&job.url) else {
            // The receiver already takes all the posts it may: this one comes back later, and what
            // was not tried is not counted.
            let wait = state.callbacks.busy_wait;
            tracing::debug!(request = %job.request_id, "the receiver is busy; the post waits");
            if let Err(e) = state.bus.postpone(delivery, wait).await {
                tracing::warn!(error = %e, "could not put a callback off; it will be redelivered");
            }
            return;
        };
        let outcome = attempt(state, &job).await;
        drop(slot);
        let attempts = delivery.attempt;
        let limit = job.max_attempts.max(1);
        let now = common::time::now_rfc3339();
        let (record_state, error, retry) = match &outcome {
            Attempt::Delivered(_) => (CALLBACK_DELIVERED, String::new(), None),
            Attempt::Failed(why) if attempts >= limit => (CALLBACK_CANCELLED, why.clone(), None),
            Attempt::Failed(why) => (
                CALLBACK_PENDING,
                why.clone(),
                Some(state.callbacks.schedule.wait_after(attempts)),
            ),
        };
        match &outcome {
            Attempt::Delivered(status) => {
                tracing::info!(request = %job.request_id, attempts, status, "callback delivered")
            }
            Attempt::Failed(why) => {
                tracing::warn!(request = %job.request_id, attempts, limit, reason = %why, "callback attempt failed")
            }
        }
        if let Err(e) = requests::record_callback(
            &state.db,
            &job.request_id,
            i64::from(attempts),
            record_state,
            &error,
            &now,
        )
        .await
        {
            // The post itself happened; its record is a report. Retrying the message for it would
            // post again, so the outcome stands and only the report is lost.
            tracing::warn!(request = %job.request_id, error = %e, "could not record a callback attempt");
        }
        let settled = match retry {
            None => state.bus.ack(delivery).await,
            Some(wait) => state.bus.retry_after(delivery, wait).await,
        };
        if let Err(e) = settled {
            tracing::warn!(request = %job.request_id, error = %e, "could not settle a callback message; it will come again");
        }
    }
    .instrument(span)
    .await
}
