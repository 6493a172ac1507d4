//! The RabbitMQ adapter of the bus.
//!
//! Publishing is the same as on the embedded bus: `publish` writes the message into the caller's
//! transaction (the outbox table), so it exists only if that transaction commits. A relay task started
//! with the adapter moves committed rows to the broker — persistent messages on a durable topic
//! exchange, each confirmed by the broker before its row is deleted — so the broker has every committed
//! message at least once, also across crashes and broker outages (`relay`). On PostgreSQL one relay per
//! database leads (an advisory lock); the others stand by.
//!
//! Consuming: `receive` fetches one message from the topic's queue with `basic.get` and manual
//! acknowledgement. The delivery stays unacknowledged on this process's consume channel until `ack`,
//! `retry` or `dead_letter` settles it; if the process dies (the channel closes) the broker puts it back
//! in the queue and delivers it again, which is the lease. Polling with `basic.get`, not a subscription
//! with `basic.consume`, because `receive` is a pull with a deadline: a subscription pushes messages to
//! the process whether or not anyone is asking, so a message arriving just after a `receive` gave up
//! would sit in this process's buffer, held away from other consumers (and from this one's next
//! `receive` on another channel), and giving it back would reorder the queue and count as a failed
//! attempt. `basic.get` takes a message only when a caller wants one. The cost is a round trip per look
//! at an empty queue, every poll interval while waiting; the relay wakes this process's waiting
//! consumers as soon as it has confirmed a batch, so a message published in the same process arrives
//! without waiting for the next poll. While the broker cannot be reached, `receive` fails (it does not
//! answer "nothing"), and the next call connects again.
//!
//! Retries and dead letters are copies: `retry` publishes the message to the topic's wait queue for
//! `policy.wait_after(attempt)`, whose expiry sends it back to the topic's queue, with the attempts so far
//! in a header; `dead_letter` (and a retry past `max_attempts`) publishes it to the topic's dead-letter
//! queue with the reason. Either copy is confirmed before the original is acknowledged, so a crash in
//! between leaves the original to be delivered again rather than losing it. See `topology` for the
//! exchange and queues.
//!
//! `dead_letters` reads the dead-letter queue without consuming it: it fetches up to `limit` messages on
//! a channel of its own and then gives them all back (a negative acknowledgement with requeue), which
//! puts them back in their order. The broker stays the only place dead letters are kept; while one
//! reader holds them, a concurrent reader sees fewer.

mod codec;
pub(super) mod link;
mod outbox;
mod relay;
mod topology;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use lapin::options::{BasicAckOptions, BasicGetOptions, BasicNackOptions, BasicPublishOptions};
use parking_lot::Mutex as SyncMutex;
use tokio::sync::{watch, Mutex, Notify};
use tokio::task::JoinHandle;

use super::port::{
    Bus, BusError, DeadLetter, Delivery, Message, Receipt as AnyReceipt, Retried, RetryPolicy,
};
use super::sql::Statements;
use super::turns::Turns;
use crate::db::{now_millis, Database, Tx};
use crate::dispatch;
use link::Link;
pub(crate) use link::Receipt;
pub use topology::Topology;

/// Settings of the RabbitMQ adapter beyond the broker's URL.
#[derive(Debug, Clone)]
pub struct RabbitOptions {
    /// Starts the name of the exchange and of every queue (see `Topology`).
    pub prefix: String,
    /// Topics whose queues `connect` declares at once, so messages published before any consumer of
    /// theirs asked are kept. (The relay also declares a topic's queue before relaying its first
    /// message, so none is dropped either way.)
    pub topics: Vec<String>,
    /// How often a waiting consumer and an idle relay look again.
    pub poll: Duration,
    /// Messages the relay publishes before it waits for their confirms (at most 1000).
    pub batch: u32,
    /// How long to wait for a connection to the broker, or for the confirm of a publish.
    pub timeout: Duration,
    /// Ready messages a topic's queue may hold before the relay keeps the topic's next ones in the
    /// outbox, where they are taken share by share (see `relay`): about what its consumers take in one
    /// look, so none waits for messages and a message of a company that just published waits behind at
    /// most this many of another's.
    pub window: u32,
    /// The window of particular topics, where it differs from `window` (slow work, such as
    /// transcription, wants a small one).
    pub windows: Vec<(String, u32)>,
}

impl RabbitOptions {
    /// The window of `topic`.
    pub fn window(&self, topic: &str) -> u32 {
        self.windows
            .iter()
            .find(|(t, _)| t == topic)
            .map_or(self.window, |(_, w)| *w)
            .max(1)
    }
}

impl Default for RabbitOptions {
    fn default() -> Self {
        RabbitOptions {
            prefix: "speech.".into(),
            topics: Vec::new(),
            poll: Duration::from_millis(100),
            batch: 100,
            timeout: Duration::from_secs(10),
            window: 1000,
            windows: Vec::new(),
        }
    }
}

/// The bus on RabbitMQ, with the outbox in the service's database.
pub struct RabbitBus {
    inner: Arc<Inner>,
    stop: watch::Sender<bool>,
    relay: SyncMutex<Option<JoinHandle<()>>>,
}

/// What the adapter and its relay task share.
struct Inner {
    url: String,
    db: Database,
    policy: RetryPolicy,
    topology: Topology,
    options: RabbitOptions,
    /// The consumers' connection, opened on first use and again after it fails.
    link: Mutex<Option<Arc<Link>>>,
    /// A message was written into a transaction here: the relay looks for its commit.
    published: Notify,
    /// The relay has put messages on the broker: waiting consumers look at once.
    relayed: Notify,
    /// A consumer here took a message: its topic's queue may have room for the relay's next.
    taken: Notify,
    /// The relay's turns between the shares of each topic.
    turns: Turns,
}

impl RabbitBus {
    /// Starts the adapter and its relay without waiting for the broker: messages published meanwhile
    /// wait in the outbox until the relay reaches it. Must be called within a Tokio runtime.
    pub fn start(
        amqp_url: &str,
        db: Database,
        policy: RetryPolicy,
        options: RabbitOptions,
    ) -> RabbitBus {
        let inner = Arc::new(Inner {
            url: amqp_url.to_string(),
            db,
            policy,
            topology: Topology::new(options.prefix.clone()),
            options,
            link: Mutex::new(None),
            published: Notify::new(),
            relayed: Notify::new(),
            taken: Notify::new(),
            turns: Turns::default(),
        });
        let (stop, stopped) = watch::channel(false);
        let relay = tokio::spawn(relay::run(inner.clone(), stopped));
        RabbitBus {
            inner,
            stop,
            relay: SyncMutex::new(Some(relay)),
        }
    }

    /// Starts the adapter, connects to the broker and declares the exchange and the queues of
    /// `options.topics`; fails when the broker cannot be reached, so a misconfigured service stops at
    /// startup.
    pub async fn connect(
        amqp_url: &str,
        db: Database,
        policy: RetryPolicy,
        options: RabbitOptions,
    ) -> Result<RabbitBus, BusError> {
        for topic in &options.topics {
            codec::check_topic(topic)?;
        }
        let bus = RabbitBus::start(amqp_url, db, policy, options);
        let link = bus.inner.link().await?;
        for topic in &bus.inner.options.topics {
            link.ensure_topic(&bus.inner.topology, topic).await?;
        }
        Ok(bus)
    }

    /// The names of this adapter's exchange and queues.
    pub fn topology(&self) -> &Topology {
        &self.inner.topology
    }

    /// Stops the relay and closes the connection to the broker. Deliveries not settled yet go back to
    /// their queues, and settling them afterwards fails with `LeaseLost`.
    pub async fn close(&self) {
        let _ = self.stop.send(true);
        let relay = self.relay.lock().take();
        if let Some(relay) = relay {
            let _ = relay.await;
        }
        if let Some(link) = self.inner.link.lock().await.take() {
            link.close().await;
        }
    }

    fn receipt(delivery: &Delivery) -> Result<&Receipt, BusError> {
        match &delivery.receipt {
            AnyReceipt::Rabbit(receipt) => Ok(receipt),
            AnyReceipt::Database { .. } => {
                Err(BusError::ForeignDelivery(delivery.message.id.clone()))
            }
        }
    }

    /// Acknowledges the original of a delivery; failing, the broker will deliver it again.
    async fn settle(delivery: &Delivery, receipt: &Receipt) -> Result<(), BusError> {
        let ack = receipt.acker.ack(BasicAckOptions::default());
        match receipt.link.within("an acknowledgement", ack).await {
            Ok(true) => Ok(()),
            // The channel closed (the lease is gone), the delivery was settled already, or the
            // connection stopped answering (the link is broken now, and the lease goes with it).
            Ok(false) | Err(_) => Err(BusError::LeaseLost(delivery.message.id.clone())),
        }
    }

    /// Publishes a confirmed copy of the delivered message to `queue` (through the default exchange),
    /// then acknowledges the original.
    async fn move_to(
        &self,
        delivery: &Delivery,
        receipt: &Receipt,
        queue: String,
        properties: lapin::BasicProperties,
    ) -> Result<(), BusError> {
        if !receipt.acker.usable() {
            // Its channel is gone: the message is back in its queue and must not be copied as well.
            return Err(BusError::LeaseLost(delivery.message.id.clone()));
        }
        let publish = receipt.link.publish.basic_publish(
            "".into(),
            queue.into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &delivery.message.body,
            properties,
        );
        let confirm = receipt.link.within("a publish", publish).await?;
        receipt
            .link
            .confirmed(confirm, &delivery.message.id)
            .await?;
        Self::settle(delivery, receipt).await
    }

    async fn bury(&self, delivery: &Delivery, reason: &str) -> Result<(), BusError> {
        let receipt = Self::receipt(delivery)?;
        let topic = &delivery.message.topic;
        receipt
            .link
            .ensure_dead(&self.inner.topology, topic)
            .await?;
        let headers = codec::copy_headers(delivery.attempt, Some(reason));
        let properties = codec::properties(&delivery.message, headers);
        let queue = self.inner.topology.dead_queue(topic);
        self.move_to(delivery, receipt, queue, properties).await
    }

    /// Moves the delivered message to the topic's wait queue for `wait`, counted as `attempts` deliveries
    /// so far: it comes back as delivery `attempts + 1`.
    async fn wait_out(
        &self,
        delivery: Delivery,
        wait: Duration,
        attempts: u32,
    ) -> Result<(), BusError> {
        let receipt = Self::receipt(&delivery)?;
        let topic = &delivery.message.topic;
        receipt
            .link
            .ensure_wait(&self.inner.topology, topic, wait)
            .await?;
        let properties = codec::properties(&delivery.message, codec::copy_headers(attempts, None))
            // The wait queue expires its messages after `wait` anyway; the message's own expiration
            // says the same, should it ever sit in a queue with another wait.
            .with_expiration(wait.as_millis().to_string().into());
        let queue = self.inner.topology.wait_queue(topic, wait);
        self.move_to(&delivery, receipt, queue, properties).await
    }
}

impl Drop for RabbitBus {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(relay) = self.relay.lock().take() {
            relay.abort();
        }
    }
}

impl Inner {
    /// The consumers' link, connecting (again) when there is none or it failed.
    async fn link(&self) -> Result<Arc<Link>, BusError> {
        let mut current = self.link.lock().await;
        if let Some(link) = current.as_ref() {
            if link.healthy() {
                return Ok(link.clone());
            }
            // Deliveries still held on it keep it alive; settling them reports the lease lost.
            link.close().await;
        }
        let link = Arc::new(
            Link::connect(
                &self.url,
                "bus-consumer",
                &self.topology,
                self.options.timeout,
            )
            .await?,
        );
        *current = Some(link.clone());
        Ok(link)
    }

    /// One message of `topic` if its queue has one now.
    async fn fetch(&self, topic: &str) -> Result<Option<Delivery>, BusError> {
        let link = self.link().await?;
        link.ensure_topic(&self.topology, topic).await?;
        let get = link.consume.basic_get(
            self.topology.queue(topic).into(),
            BasicGetOptions { no_ack: false },
        );
        let got = link.within("a get", get).await?;
        Ok(got.map(|got| {
            let (message, attempt) = codec::decode(topic, &got.delivery);
            Delivery {
                message,
                attempt,
                receipt: AnyReceipt::Rabbit(Receipt {
                    acker: got.delivery.acker.clone(),
                    link,
                }),
            }
        }))
    }
}

#[async_trait]
impl Bus for RabbitBus {
    /// A connection to the broker is open, or can be opened now.
    async fn ready(&self) -> Result<(), BusError> {
        self.inner.link().await.map(|_| ())
    }

    async fn publish_many(&self, tx: &mut Tx, messages: &[Message]) -> Result<(), BusError> {
        if messages.is_empty() {
            return Ok(());
        }
        for message in messages {
            codec::check_topic(&message.topic)?;
        }
        dispatch!(&mut *tx, Statements::insert_many(messages, now_millis()))?;
        // The relay looks for the rows soon; they are there to see once the transaction commits.
        self.inner.published.notify_waiters();
        Ok(())
    }

    async fn receive(&self, topic: &str, wait: Duration) -> Result<Option<Delivery>, BusError> {
        codec::check_topic(topic)?;
        let deadline = tokio::time::Instant::now() + wait;
        let mut failed = false;
        loop {
            let relayed = self.inner.relayed.notified();
            match self.inner.fetch(topic).await {
                Ok(Some(delivery)) => {
                    self.inner.taken.notify_waiters();
                    return Ok(Some(delivery));
                }
                Ok(None) => {}
                // The broker can refuse a get for a moment (a queue whose process is (re)starting
                // answers INTERNAL_ERROR `noproc` and closes the connection): the next look reconnects.
                // One failure is tried again at once whatever the wait; later ones until the deadline.
                Err(BusError::Broker(e)) if !failed || tokio::time::Instant::now() < deadline => {
                    tracing::debug!(error = %e, topic, "the broker refused a get; looking again");
                    if failed {
                        tokio::time::sleep(self.inner.options.poll).await;
                    }
                    failed = true;
                    continue;
                }
                Err(e) => return Err(e),
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let nap = self.inner.options.poll.min(deadline - now);
            let _ = tokio::time::timeout(nap, relayed).await;
        }
    }

    async fn ack(&self, delivery: Delivery) -> Result<(), BusError> {
        let receipt = Self::receipt(&delivery)?;
        Self::settle(&delivery, receipt).await
    }

    async fn retry(&self, delivery: Delivery, reason: &str) -> Result<Retried, BusError> {
        if delivery.attempt >= self.inner.policy.max_attempts {
            let reason = format!("{reason} (after {} attempts)", delivery.attempt);
            self.bury(&delivery, &reason).await?;
            return Ok(Retried::DeadLettered);
        }
        let wait = self.inner.policy.wait_after(delivery.attempt);
        self.retry_after(delivery, wait).await?;
        Ok(Retried::After(wait))
    }

    async fn retry_after(&self, delivery: Delivery, wait: Duration) -> Result<(), BusError> {
        let attempts = delivery.attempt;
        self.wait_out(delivery, wait, attempts).await
    }

    async fn postpone(&self, delivery: Delivery, wait: Duration) -> Result<(), BusError> {
        let attempts = delivery.attempt.saturating_sub(1);
        self.wait_out(delivery, wait, attempts).await
    }

    async fn dead_letter(&self, delivery: Delivery, reason: &str) -> Result<(), BusError> {
        self.bury(&delivery, reason).await
    }

    async fn dead_letters(&self, topic: &str, limit: i64) -> Result<Vec<DeadLetter>, BusError> {
        codec::check_topic(topic)?;
        let link = self.inner.link().await?;
        link.ensure_dead(&self.inner.topology, topic).await?;
        // A channel of its own: giving the messages back with `multiple` must not touch deliveries
        // that consumers hold on the consume channel.
        let channel = link.channel().await?;
        let queue = self.inner.topology.dead_queue(topic);
        let mut dead = Vec::new();
        let mut last_tag = None;
        while (dead.len() as i64) < limit {
            let get = channel.basic_get(queue.as_str().into(), BasicGetOptions { no_ack: false });
            match link.within("a get", get).await? {
                Some(got) => {
                    dead.push(codec::dead_letter(topic, &got.delivery));
                    last_tag = Some(got.delivery.delivery_tag);
                }
                None => break,
            }
        }
        if let Some(tag) = last_tag {
            let nack = channel.basic_nack(
                tag,
                BasicNackOptions {
                    multiple: true,
                    requeue: true,
                },
            );
            link.within("giving dead letters back", nack).await?;
        }
        // Closing gives back anything still held, should the nack not have gone out.
        link.within("closing a channel", channel.close(200, "OK".into()))
            .await?;
        Ok(dead)
    }

    async fn dead_letter_count(&self, topic: &str) -> Result<u64, BusError> {
        codec::check_topic(topic)?;
        let link = self.inner.link().await?;
        // Declaring the queue again as it is answers how many messages it holds.
        let declared = self.inner.topology.dead_count(&link.publish, topic);
        Ok(link.within("counting dead letters", declared).await?)
    }

    async fn waiting(&self, topic: &str) -> Result<Vec<(String, u64)>, BusError> {
        Ok(dispatch!(&self.inner.db, Statements::count_waiting(topic))?)
    }

    /// Each dead letter is published to the topic's queue as a fresh copy, confirmed, and only then
    /// taken off the dead-letter queue: a failure in between leaves it in both, delivered at least once.
    async fn replay_dead(&self, topic: &str, limit: u64) -> Result<u64, BusError> {
        codec::check_topic(topic)?;
        let link = self.inner.link().await?;
        link.ensure_topic(&self.inner.topology, topic).await?;
        link.ensure_dead(&self.inner.topology, topic).await?;
        let channel = link.channel().await?;
        let dead_queue = self.inner.topology.dead_queue(topic);
        let queue = self.inner.topology.queue(topic);
        let mut replayed = 0;
        while replayed < limit {
            let get = channel.basic_get(
                dead_queue.as_str().into(),
                BasicGetOptions { no_ack: false },
            );
            let Some(got) = link.within("a get", get).await? else {
                break;
            };
            let message = codec::dead_letter(topic, &got.delivery).message;
            let properties = codec::properties(&message, codec::copy_headers(0, None));
            let publish = link.publish.basic_publish(
                "".into(),
                queue.as_str().into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &message.body,
                properties,
            );
            let confirm = link.within("a publish", publish).await?;
            link.confirmed(confirm, &message.id).await?;
            let ack = got.delivery.acker.ack(BasicAckOptions::default());
            link.within("taking a replayed dead letter off its queue", ack)
                .await?;
            replayed += 1;
        }
        link.within("closing a channel", channel.close(200, "OK".into()))
            .await?;
        self.inner.relayed.notify_waiters();
        Ok(replayed)
    }
}
