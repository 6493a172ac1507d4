//! The port itself: a message, its delivery and how it is settled, the retry policy, and the trait both
//! adapters implement (the guarantees are in the module above).

use std::time::Duration;

use async_trait::async_trait;

use crate::db::{StoreError, Tx};

/// A message: its topic (which queue it goes to), an opaque body (a protobuf message) and the W3C trace
/// context of the work that sent it, so one trace follows the request into the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Unique per message; consumers may use it to recognise a redelivery.
    pub id: String,
    pub topic: String,
    /// Whose work this is (a company): messages of a topic are handed out share by share. Empty for
    /// messages of no one in particular, which take their turns as one share.
    pub share: String,
    pub body: Vec<u8>,
    /// A W3C `traceparent` header value.
    pub traceparent: Option<String>,
}

impl Message {
    pub fn new(topic: impl Into<String>, body: Vec<u8>) -> Message {
        Message {
            id: uuid::Uuid::now_v7().simple().to_string(),
            topic: topic.into(),
            share: String::new(),
            body,
            traceparent: None,
        }
    }

    /// The message is `share`'s work (see `share`).
    pub fn with_share(mut self, share: impl Into<String>) -> Message {
        self.share = share.into();
        self
    }

    pub fn with_traceparent(mut self, traceparent: Option<String>) -> Message {
        self.traceparent = traceparent;
        self
    }
}

/// A message leased to one consumer until it acknowledges, retries or buries it, or the lease runs out.
#[derive(Debug)]
pub struct Delivery {
    pub message: Message,
    /// 1 on the first delivery.
    pub attempt: u32,
    /// What the adapter that delivered it needs to settle it.
    pub(super) receipt: Receipt,
}

/// The adapter-specific half of a delivery, private so that only the adapter that handed a message out
/// can settle it.
#[derive(Debug)]
pub(super) enum Receipt {
    /// A row of the outbox leased by `DatabaseQueue`: its sequence number and the lease's random token.
    Database { seq: i64, lease: i64 },
    /// A message fetched from RabbitMQ, unacknowledged on the channel it came from.
    Rabbit(super::rabbit::link::Receipt),
}

/// A message set aside after its attempts ran out or a consumer found it unprocessable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    pub message: Message,
    pub attempts: u32,
    pub reason: String,
}

/// What became of a message given back with `retry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retried {
    /// It comes back after this wait.
    After(Duration),
    /// Its attempts are used up: it is a dead letter now.
    DeadLettered,
}

/// How often and how patiently a failing message is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Deliveries at most, the first included; then the message is a dead letter.
    pub max_attempts: u32,
    /// The wait after the first failure; each further failure doubles it, up to `max_wait`.
    pub first_wait: Duration,
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 10,
            first_wait: Duration::from_secs(1),
            max_wait: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// The wait before delivery `attempt + 1`, after delivery `attempt` failed.
    pub fn wait_after(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.first_wait
            .saturating_mul(1u32 << doublings)
            .min(self.max_wait)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The consumer held the message past its lease: another consumer may have it now, and this one's
    /// acknowledgement or retry is void (the message is delivered again, at least once).
    #[error("the lease on message {0} ran out before it was settled")]
    LeaseLost(String),
    /// The message broker failed or could not be reached.
    #[error("message broker: {0}")]
    Broker(#[from] lapin::Error),
    /// The broker did not answer in time (a connection, or the confirm of a publish).
    #[error("the message broker did not answer in time: {0}")]
    Timeout(String),
    /// The broker refused a message: a negative confirm, or no queue to route it to.
    #[error("the message broker refused message {0}: {1}")]
    Refused(String, String),
    /// A delivery was given to an adapter other than the one that delivered it.
    #[error("message {0} was not delivered by this bus")]
    ForeignDelivery(String),
    /// A topic name the broker's routing cannot carry as is.
    #[error("topic {0:?} is not a valid name (1 to 200 letters, digits, '.', '_' or '-')")]
    InvalidTopic(String),
}

/// The bus port: every adapter behaves as the contract suite describes.
#[async_trait]
pub trait Bus: Send + Sync {
    /// Writes `message` into `tx`: it is delivered once `tx` commits, and never if it rolls back.
    async fn publish(&self, tx: &mut Tx, message: &Message) -> Result<(), BusError> {
        self.publish_many(tx, std::slice::from_ref(message)).await
    }

    /// Writes every one of `messages` into `tx`, as `publish` writes one, in as few statements as the
    /// adapter can.
    async fn publish_many(&self, tx: &mut Tx, messages: &[Message]) -> Result<(), BusError>;

    /// The oldest message of `topic` ready for delivery, leased to the caller; waits up to `wait` for
    /// one to arrive, then answers `None`.
    async fn receive(&self, topic: &str, wait: Duration) -> Result<Option<Delivery>, BusError>;

    /// Up to `max` messages of `topic`, oldest first, each leased as `receive` leases one: waits up to
    /// `wait` for the first, then takes only what is ready at once. A batch consumer pays one lease for
    /// the batch where the adapter can (the embedded queue leases the rows in one statement).
    async fn receive_many(
        &self,
        topic: &str,
        wait: Duration,
        max: usize,
    ) -> Result<Vec<Delivery>, BusError> {
        let mut deliveries = Vec::new();
        let Some(first) = self.receive(topic, wait).await? else {
            return Ok(deliveries);
        };
        deliveries.push(first);
        while deliveries.len() < max {
            match self.receive(topic, Duration::ZERO).await {
                Ok(Some(delivery)) => deliveries.push(delivery),
                // What was taken stays leased and is the caller's to settle.
                _ => break,
            }
        }
        Ok(deliveries)
    }

    /// Acknowledges every one of `deliveries`, as `ack` would each. All are tried; the error says the
    /// first that could not be (its message is delivered again).
    async fn ack_many(&self, deliveries: Vec<Delivery>) -> Result<(), BusError> {
        let mut first_error = None;
        for delivery in deliveries {
            if let Err(e) = self.ack(delivery).await {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The consumer is still at work on `delivery`: its lease starts again, so a long job (a long
    /// recording) is not delivered to another consumer meanwhile. Call it well within the lease. The
    /// lease of RabbitMQ's deliveries is the consumer's channel, which needs nothing.
    async fn keep_leased(&self, delivery: &Delivery) -> Result<(), BusError> {
        let _ = delivery;
        Ok(())
    }

    /// The message is done with: call it after the consumer's own work has committed.
    async fn ack(&self, delivery: Delivery) -> Result<(), BusError>;

    /// The attempt failed: the message comes back after the policy's wait, or becomes a dead letter when
    /// its attempts are used up.
    async fn retry(&self, delivery: Delivery, reason: &str) -> Result<Retried, BusError>;

    /// The attempt failed and the consumer keeps its own count and schedule (a callback delivery's
    /// attempt limit is its request's, not the bus's): the message comes back after `wait`, its attempt
    /// number one higher, whatever the bus's policy says.
    async fn retry_after(&self, delivery: Delivery, wait: Duration) -> Result<(), BusError>;

    /// The consumer did not attempt the message (what it needs is busy: a callback receiver already
    /// taking the posts it may): it comes back after `wait`, and this delivery does not count as an
    /// attempt.
    async fn postpone(&self, delivery: Delivery, wait: Duration) -> Result<(), BusError>;

    /// The message can never be processed (a poison message): it becomes a dead letter at once.
    async fn dead_letter(&self, delivery: Delivery, reason: &str) -> Result<(), BusError>;

    /// The dead letters of `topic`, oldest first.
    async fn dead_letters(&self, topic: &str, limit: i64) -> Result<Vec<DeadLetter>, BusError>;

    /// How many dead letters `topic` holds (what an operator watches: a metric and `/readyz` say it).
    async fn dead_letter_count(&self, topic: &str) -> Result<u64, BusError>;

    /// How many messages of `topic` wait in the service's database, per share (shares with none left
    /// out): on the embedded queue every message not yet acknowledged or dead, on RabbitMQ those the
    /// relay has not moved to the broker yet (the backlog beyond the topic's window). What an operator
    /// watches to see whose work is piling up.
    async fn waiting(&self, topic: &str) -> Result<Vec<(String, u64)>, BusError>;

    /// Puts up to `limit` of the oldest dead letters of `topic` back in its queue as new deliveries, their
    /// attempts counted from one again, once what made them fail is mended; how many were.
    async fn replay_dead(&self, topic: &str, limit: u64) -> Result<u64, BusError>;

    /// Whether messages can be received now (for `/readyz`). A bus kept in the service's database is
    /// ready when the database is, which `/readyz` reports on its own.
    async fn ready(&self) -> Result<(), BusError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_the_first_up_to_the_cap() {
        let p = RetryPolicy {
            max_attempts: 100,
            first_wait: Duration::from_secs(5),
            max_wait: Duration::from_secs(60),
        };
        let waits: Vec<u64> = (1..=6).map(|a| p.wait_after(a).as_secs()).collect();
        assert_eq!(waits, vec![5, 10, 20, 40, 60, 60]);
        assert_eq!(p.wait_after(99), Duration::from_secs(60), "no overflow");
    }
}
