//! Where messages go on the broker, and the declarations that make those places exist. Every name
//! starts with a prefix, so several deployments (or parallel tests) share one broker without meeting.
//!
//! - One durable topic exchange, `{prefix}bus`: the relay publishes each message there with its topic
//!   as the routing key.
//! - Per topic, a durable quorum queue `{prefix}{topic}` bound to the exchange by the topic. Quorum
//!   queues count redeliveries (`x-delivery-count`), which gives the attempt number of a message whose
//!   consumer died, and are the broker's replicated, at-least-once queue type.
//! - Per topic and per wait of the retry policy, a classic queue `{prefix}{topic}:wait:{ms}ms` whose
//!   messages expire after that wait and are then dead-lettered straight back into the topic's queue
//!   (through the default exchange, so no other queue bound to the topic gets a copy). One queue per wait,
//!   not one per topic, because a classic queue expires messages only at its head: a short wait queued
//!   behind a long one would otherwise wait the long one out.
//! - Per topic, a classic queue `{prefix}{topic}:dead` of dead letters. It is also the topic queue's own
//!   dead-letter target, so a message the broker gives up on (a delivery limit) is kept, not dropped.
//!   Classic, because reading dead letters returns them to the queue, which a quorum queue would count
//!   towards its delivery limit.
//!
//! Topics are limited to letters, digits, `.`, `_` and `-`, so `:` cannot make one topic's queue name
//! equal another's wait or dead queue, and no topic is a wildcard of the exchange.

use std::collections::BTreeSet;
use std::time::Duration;

use lapin::options::{
    ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, ExchangeKind};

use super::link;
use crate::bus::port::{BusError, RetryPolicy};

/// The names of one deployment's exchange and queues on the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    prefix: String,
}

impl Topology {
    pub fn new(prefix: impl Into<String>) -> Topology {
        Topology {
            prefix: prefix.into(),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The topic exchange every message is published to.
    pub fn exchange(&self) -> String {
        format!("{}bus", self.prefix)
    }

    /// The queue consumers of `topic` receive from.
    pub fn queue(&self, topic: &str) -> String {
        format!("{}{topic}", self.prefix)
    }

    /// The queue where a message of `topic` waits out `wait` before it goes back to the topic's queue.
    pub fn wait_queue(&self, topic: &str, wait: Duration) -> String {
        format!("{}{topic}:wait:{}ms", self.prefix, wait.as_millis())
    }

    /// The dead letters of `topic`.
    pub fn dead_queue(&self, topic: &str) -> String {
        format!("{}{topic}:dead", self.prefix)
    }

    /// Every wait `policy` can ask for, hence every wait queue a topic may have.
    pub fn waits(policy: &RetryPolicy) -> Vec<Duration> {
        let mut waits = BTreeSet::new();
        for attempt in 1..policy.max_attempts {
            let wait = policy.wait_after(attempt);
            if !waits.insert(wait) && wait >= policy.max_wait {
                break;
            }
        }
        waits.into_iter().collect()
    }

    pub(super) async fn declare_exchange(&self, channel: &Channel) -> Result<(), lapin::Error> {
        channel
            .exchange_declare(
                self.exchange().into(),
                ExchangeKind::Topic,
                ExchangeDeclareOptions {
                    durable: true,
                    ..ExchangeDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
    }

    /// The topic's queue, bound to the exchange, and its dead-letter queue.
    pub(super) async fn declare_topic(
        &self,
        channel: &Channel,
        topic: &str,
    ) -> Result<(), lapin::Error> {
        self.declare_dead(channel, topic).await?;
        let mut args = FieldTable::default();
        args.insert("x-queue-type".into(), text("quorum"));
        args.insert("x-dead-letter-exchange".into(), text(""));
        args.insert(
            "x-dead-letter-routing-key".into(),
            text(&self.dead_queue(topic)),
        );
        let queue = self.queue(topic);
        channel
            .queue_declare(queue.as_str().into(), QueueDeclareOptions::durable(), args)
            .await?;
        channel
            .queue_bind(
                queue.into(),
                self.exchange().into(),
                topic.into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
    }

    /// How many ready messages the (declared) queue of `topic` holds.
    pub(super) async fn ready_count(
        &self,
        channel: &Channel,
        topic: &str,
    ) -> Result<u32, lapin::Error> {
        let queue = channel
            .queue_declare(
                self.queue(topic).into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await?;
        Ok(queue.message_count())
    }

    pub(super) async fn declare_wait(
        &self,
        channel: &Channel,
        topic: &str,
        wait: Duration,
    ) -> Result<(), lapin::Error> {
        let mut args = FieldTable::default();
        args.insert("x-queue-type".into(), text("classic"));
        args.insert(
            "x-message-ttl".into(),
            AMQPValue::LongLongInt(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX)),
        );
        args.insert("x-dead-letter-exchange".into(), text(""));
        args.insert("x-dead-letter-routing-key".into(), text(&self.queue(topic)));
        channel
            .queue_declare(
                self.wait_queue(topic, wait).into(),
                QueueDeclareOptions::durable(),
                args,
            )
            .await
            .map(drop)
    }

    pub(super) async fn declare_dead(
        &self,
        channel: &Channel,
        topic: &str,
    ) -> Result<(), lapin::Error> {
        self.dead_count(channel, topic).await.map(drop)
    }

    /// Declares the dead-letter queue of `topic` (again), which answers how many messages it holds.
    pub(super) async fn dead_count(
        &self,
        channel: &Channel,
        topic: &str,
    ) -> Result<u64, lapin::Error> {
        let mut args = FieldTable::default();
        args.insert("x-queue-type".into(), text("classic"));
        let queue = channel
            .queue_declare(
                self.dead_queue(topic).into(),
                QueueDeclareOptions::durable(),
                args,
            )
            .await?;
        Ok(u64::from(queue.message_count()))
    }

    /// Deletes the exchange and every queue of `topics` under `policy`, with the messages they hold: for
    /// tests, and for taking a deployment down for good. Deleting what does not exist is not an error.
    pub async fn delete(
        &self,
        url: &str,
        topics: &[&str],
        policy: &RetryPolicy,
    ) -> Result<(), BusError> {
        let connection = link::open(url, "bus-topology-delete", Duration::from_secs(10)).await?;
        let channel = connection.create_channel().await?;
        for topic in topics {
            let mut queues = vec![self.queue(topic), self.dead_queue(topic)];
            queues.extend(
                Self::waits(policy)
                    .into_iter()
                    .map(|w| self.wait_queue(topic, w)),
            );
            for queue in queues {
                channel
                    .queue_delete(queue.into(), QueueDeleteOptions::default())
                    .await?;
            }
        }
        channel
            .exchange_delete(self.exchange().into(), ExchangeDeleteOptions::default())
            .await?;
        connection.close(200, "OK".into()).await?;
        Ok(())
    }
}

fn text(value: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_collide_across_topics() {
        let t = Topology::new("speech.");
        assert_eq!(t.exchange(), "speech.bus");
        assert_eq!(t.queue("jobs"), "speech.jobs");
        assert_eq!(t.dead_queue("jobs"), "speech.jobs:dead");
        assert_eq!(
            t.wait_queue("jobs", Duration::from_millis(1500)),
            "speech.jobs:wait:1500ms"
        );
    }

    #[test]
    fn one_wait_queue_per_distinct_wait() {
        let policy = RetryPolicy {
            max_attempts: 1000,
            first_wait: Duration::from_secs(1),
            max_wait: Duration::from_secs(10),
        };
        let waits: Vec<u64> = Topology::waits(&policy)
            .iter()
            .map(|w| w.as_secs())
            .collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 10]);
        let once = RetryPolicy {
            max_attempts: 1,
            ..policy
        };
        assert!(Topology::waits(&once).is_empty(), "no retry, no wait");
    }
}
