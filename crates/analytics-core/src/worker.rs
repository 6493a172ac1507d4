//! The worker runtime every consumer of the bus shares: the receive loops (in batches, or many messages
//! under way at once), and the settling of each message after its work: acknowledged once the work has
//! committed, retried with growing waits when it failed, set aside as a dead letter at once when it can
//! never be processed. The core's jobs (`crate::jobs`) and the transcription crate's run on it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use common::bus::Delivery;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::state::AnalyticsState;

/// Why a job did not finish.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JobError {
    /// The message can never be processed: it becomes a dead letter.
    #[error("unprocessable message: {0}")]
    Poison(String),
    /// Something failed that may work later: the message is retried.
    #[error("{0}")]
    Retry(String),
}

impl JobError {
    pub fn retry(e: impl std::fmt::Display) -> JobError {
        JobError::Retry(e.to_string())
    }
}

/// How long one `receive` waits before checking for shutdown.
pub(crate) const POLL: Duration = Duration::from_secs(1);

/// Running workers; `stop` ends them after the message each is working on. Each crate's jobs start on
/// one `Workers` (`crate::jobs::spawn`), so that one signal stops them all.
pub struct Workers {
    stop: watch::Sender<bool>,
    handles: Vec<JoinHandle<()>>,
}

impl Default for Workers {
    fn default() -> Workers {
        Workers::new()
    }
}

impl Workers {
    /// None running yet.
    pub fn new() -> Workers {
        Workers {
            stop: watch::channel(false).0,
            handles: Vec::new(),
        }
    }

    /// What a worker loop watches to know it must stop.
    pub fn stopped(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// Adds running workers, stopped with the others.
    pub fn extend(&mut self, handles: impl IntoIterator<Item = JoinHandle<()>>) {
        self.handles.extend(handles);
    }

    pub async fn stop(self) {
        self.stop.send_replace(true);
        for handle in self.handles {
            let _ = handle.await;
        }
    }

    /// Ends the workers at once, as a killed process would: messages they hold are not settled.
    pub fn abort(self) {
        for handle in &self.handles {
            handle.abort();
        }
    }
}

/// How a worker takes its messages: up to `most` at once, and after a batch that was not full (the
/// worker keeps up) a `pause` before the next, in which what keeps coming gathers into one batch. A
/// full batch means a backlog: the next is taken at once.
#[derive(Debug, Clone, Copy)]
pub struct Batching {
    pub most: usize,
    pub pause: Duration,
}

impl Batching {
    /// One message at a time, no pause.
    pub const ONE: Batching = Batching {
        most: 1,
        pause: Duration::ZERO,
    };

    /// Up to `most` at once, no pause.
    pub const fn up_to(most: usize) -> Batching {
        Batching {
            most,
            pause: Duration::ZERO,
        }
    }
}

/// The receive loop every worker shares: waits for a message of `topic`, takes what else is ready as
/// `batching` says, and hands them to `work`, which settles each one. Stops between batches when told
/// (within `POLL` of being told).
pub fn spawn_loop<F, Fut>(
    state: Arc<AnalyticsState>,
    topic: &'static str,
    batching: Batching,
    mut stopped: watch::Receiver<bool>,
    work: F,
) -> JoinHandle<()>
where
    F: Fn(Arc<AnalyticsState>, Vec<Delivery>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        loop {
            if *stopped.borrow() {
                break;
            }
            // Never raced against the stop signal: a receive cut off half way may have taken messages
            // that nobody would settle (a RabbitMQ get answered after its caller has gone holds its
            // message on the service's shared channel for as long as the service runs). A receive
            // returns within POLL, and the signal is looked at between receives.
            match state.bus.receive_many(topic, POLL, batching.most).await {
                Ok(deliveries) if deliveries.is_empty() => {}
                Ok(deliveries) => {
                    let full = deliveries.len() >= batching.most;
                    work(state.clone(), deliveries).await;
                    if !full && !batching.pause.is_zero() {
                        // Nothing is held here: the pause may end early on the stop signal.
                        let _ = tokio::time::timeout(batching.pause, stopped.changed()).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, topic, "the bus could not be read; trying again");
                    tokio::time::sleep(POLL).await;
                }
            }
        }
    })
}

/// A receive loop that hands each message to `handle` in a task of its own, at most `limit` at once:
/// one poller of the bus, many messages under way (callback posts mostly wait on their receivers).
/// Stops taking messages when told, and ends once those under way are settled.
pub fn spawn_concurrent<F, Fut>(
    state: Arc<AnalyticsState>,
    topic: &'static str,
    limit: usize,
    mut stopped: watch::Receiver<bool>,
    handle: F,
) -> JoinHandle<()>
where
    F: Fn(Arc<AnalyticsState>, Delivery) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        let slots = Arc::new(tokio::sync::Semaphore::new(limit));
        loop {
            if *stopped.borrow() {
                break;
            }
            let slot = tokio::select! {
                _ = stopped.changed() => break,
                slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            };
            // Not raced against the stop signal either, as in `spawn_loop`.
            match state.bus.receive(topic, POLL).await {
                Ok(Some(delivery)) => {
                    let work = handle(state.clone(), delivery);
                    tokio::spawn(async move {
                        work.await;
                        drop(slot);
                    });
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, topic, "the bus could not be read; trying again");
                    tokio::time::sleep(POLL).await;
                }
            }
        }
        // The messages under way end before the worker does.
        let _ = slots.acquire_many(limit as u32).await;
    })
}

/// Runs `handle` on each message alone, in the trace its publisher started, and settles it.
pub(crate) async fn one_by_one<F, Fut>(
    state: Arc<AnalyticsState>,
    topic: &'static str,
    deliveries: Vec<Delivery>,
    handle: F,
) where
    F: Fn(Arc<AnalyticsState>, Vec<u8>) -> Fut,
    Fut: Future<Output = Result<(), JobError>>,
{
    use tracing::Instrument;
    for delivery in deliveries {
        let span = common::telemetry::job_span(topic, delivery.message.traceparent.as_deref());
        let outcome = handle(state.clone(), delivery.message.body.clone())
            .instrument(span)
            .await;
        settle(&state, topic, delivery, outcome).await;
    }
}

/// How each message of a batch went, its messages by call: those of the calls in `failed` with their
/// call's error, the others done.
pub(crate) fn outcomes_by_call(
    mut by_call: std::collections::BTreeMap<String, Vec<Delivery>>,
    failed: impl IntoIterator<Item = (String, JobError)>,
) -> Vec<(Delivery, Result<(), JobError>)> {
    let mut outcomes = Vec::new();
    for (call, e) in failed {
        for delivery in by_call.remove(&call).into_iter().flatten() {
            outcomes.push((delivery, Err(e.clone())));
        }
    }
    outcomes.extend(by_call.into_values().flatten().map(|d| (d, Ok(()))));
    outcomes
}

/// Settles a batch: the messages whose work succeeded are acknowledged together, the others one by one
/// as `settle` does.
pub(crate) async fn settle_all(
    state: &AnalyticsState,
    topic: &str,
    settled: Vec<(Delivery, Result<(), JobError>)>,
) {
    let mut done = Vec::new();
    for (delivery, outcome) in settled {
        match outcome {
            Ok(()) => done.push(delivery),
            failed => settle(state, topic, delivery, failed).await,
        }
    }
    let count = done.len();
    if let Err(e) = state.bus.ack_many(done).await {
        tracing::warn!(topic, count, error = %e, "could not acknowledge a batch; what was not is redelivered");
    }
}

/// Settles messages whose work ended with one shared `outcome` (a batch written at once): acknowledged
/// together when it succeeded, each retried when it failed.
pub(crate) async fn settle_together<E: std::fmt::Display>(
    state: &AnalyticsState,
    topic: &str,
    deliveries: Vec<Delivery>,
    outcome: &Result<(), E>,
) {
    let settled = deliveries
        .into_iter()
        .map(|delivery| {
            let outcome = outcome
                .as_ref()
                .map(|_| ())
                .map_err(|e| JobError::Retry(e.to_string()));
            (delivery, outcome)
        })
        .collect();
    settle_all(state, topic, settled).await;
}

/// The messages of a batch by the call each names (`call_of` decodes it from the body), so that a call
/// named by several is worked on once; a message that does not decode is a dead letter at once.
pub(crate) async fn by_call(
    state: &AnalyticsState,
    topic: &str,
    batch: Vec<Delivery>,
    call_of: impl Fn(&[u8]) -> Result<String, messages::DecodeError>,
) -> std::collections::BTreeMap<String, Vec<Delivery>> {
    let mut calls: std::collections::BTreeMap<String, Vec<Delivery>> = Default::default();
    for delivery in batch {
        match call_of(&delivery.message.body) {
            Ok(call) => calls.entry(call).or_default().push(delivery),
            Err(e) => settle(state, topic, delivery, Err(JobError::Poison(e.to_string()))).await,
        }
    }
    calls
}

/// Acknowledges, retries or dead-letters the message after its work ended with `outcome`.
pub async fn settle(
    state: &AnalyticsState,
    topic: &str,
    delivery: Delivery,
    outcome: Result<(), JobError>,
) {
    let id = delivery.message.id.clone();
    let settled = match outcome {
        Ok(()) => state.bus.ack(delivery).await,
        Err(JobError::Poison(reason)) => {
            tracing::error!(topic, message = %id, %reason, "dead-lettering an unprocessable message");
            state.bus.dead_letter(delivery, &reason).await
        }
        Err(JobError::Retry(reason)) => {
            tracing::warn!(topic, message = %id, %reason, "job failed; it will be retried");
            state.bus.retry(delivery, &reason).await.map(|_| ())
        }
    };
    if let Err(e) = settled {
        tracing::warn!(topic, message = %id, error = %e, "could not settle a message; it will be redelivered");
    }
}
