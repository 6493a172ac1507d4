//! The analytics workers: one loop per bus topic that takes a message, does its work, and acknowledges
//! only after that work has committed. A failure is retried with growing waits; a message that can never
//! be processed (it does not decode) is set aside as a dead letter at once. Workers run in the service
//! process (`run_workers`) or on their own (`analytics-service worker`).

pub mod announce;
pub mod delete;
pub mod reindex;
pub mod rescore;
pub mod score;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use common::bus::Delivery;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::state::AnalyticsState;

/// Why a job did not finish.
#[derive(Debug, thiserror::Error)]
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

/// Running workers; `stop` ends them after the message each is working on.
pub struct Workers {
    stop: watch::Sender<bool>,
    handles: Vec<JoinHandle<()>>,
}

impl Workers {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
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

/// Starts one worker per topic: reindexing and scoring in batches (an index write, a transaction per
/// batch), deletions and rescore jobs one at a time.
pub fn spawn(state: Arc<AnalyticsState>) -> Workers {
    let (stop, stopped) = watch::channel(false);
    let handles = vec![
        spawn_loop(
            state.clone(),
            messages::topics::REINDEX,
            reindex::BATCH,
            stopped.clone(),
            reindex::process,
        ),
        spawn_loop(
            state.clone(),
            messages::topics::DELETE,
            1,
            stopped.clone(),
            |state, jobs| one_by_one(state, messages::topics::DELETE, jobs, delete::handle),
        ),
        spawn_loop(
            state.clone(),
            messages::topics::SCORE,
            score::BATCH,
            stopped.clone(),
            score::process,
        ),
        spawn_loop(
            state,
            messages::topics::RESCORE,
            1,
            stopped,
            |state, jobs| one_by_one(state, messages::topics::RESCORE, jobs, rescore::handle),
        ),
    ];
    Workers { stop, handles }
}

/// The receive loop every worker shares: waits for a message of `topic`, takes what else is ready up to
/// `batch`, and hands them to `work`, which settles each one. Stops between batches when told.
fn spawn_loop<F, Fut>(
    state: Arc<AnalyticsState>,
    topic: &'static str,
    batch: usize,
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
            let first = tokio::select! {
                _ = stopped.changed() => break,
                d = state.bus.receive(topic, POLL) => d,
            };
            let mut deliveries = match first {
                Ok(Some(delivery)) => vec![delivery],
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, topic, "the bus could not be read; trying again");
                    tokio::time::sleep(POLL).await;
                    continue;
                }
            };
            while deliveries.len() < batch {
                match state.bus.receive(topic, Duration::ZERO).await {
                    Ok(Some(delivery)) => deliveries.push(delivery),
                    _ => break,
                }
            }
            work(state.clone(), deliveries).await;
        }
    })
}

/// Runs `handle` on each message alone, in the trace its publisher started, and settles it.
async fn one_by_one<F, Fut>(
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

/// Acknowledges, retries or dead-letters the message after its work ended with `outcome`.
pub(crate) async fn settle(
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
