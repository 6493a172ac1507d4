//! A connection to the broker with the two channels the adapter works on, and the receipt that ties a
//! delivery to the channel it came from.
//!
//! The channels are separate because they fail separately: a failed publish or declaration closes its
//! channel, and if that were the channel deliveries were fetched on, every message held by every
//! consumer of this process would go back to its queue.
//!
//! Every exchange with the broker on a link has a deadline ([`Link::within`]). The client library notices
//! a connection that drops in most cases, but not in all: a socket closed by its peer while frames were
//! still being handled can leave it waiting for an answer that never comes, and a wait without a deadline
//! would then hold the relay, or every consumer of the process, for good. A link whose exchange missed
//! its deadline counts as broken, and its users connect again.

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lapin::options::ConfirmSelectOptions;
use lapin::{Acker, Channel, Confirmation, Connection, ConnectionProperties, PublisherConfirm};
use parking_lot::Mutex;

use super::topology::Topology;
use crate::bus::port::BusError;
use crate::db::redact;

/// Connects to `url` within `timeout` (an unreachable broker may not even refuse the connection).
pub(super) async fn open(url: &str, name: &str, timeout: Duration) -> Result<Connection, BusError> {
    let properties = ConnectionProperties::default().with_connection_name(name.into());
    match tokio::time::timeout(timeout, Connection::connect(url, properties)).await {
        Ok(connection) => Ok(connection?),
        Err(_) => Err(BusError::Timeout(format!("connecting to {}", redact(url)))),
    }
}

#[derive(Debug)]
pub(super) struct Link {
    connection: Connection,
    /// Where deliveries are fetched and acknowledged. A delivery not acknowledged when this channel
    /// closes (the process died, the connection dropped) goes back to its queue: that is the lease.
    pub(super) consume: Channel,
    /// In confirm mode: every publish is confirmed before what depends on it (deleting the outbox row,
    /// acknowledging the original of a retry or a dead letter) happens.
    pub(super) publish: Channel,
    /// Queues declared on this connection already; declaring again is harmless but costs a round trip.
    declared: Mutex<HashSet<String>>,
    /// How long one exchange with the broker may take.
    timeout: Duration,
    /// An exchange missed its deadline: the connection is not trusted again.
    broken: AtomicBool,
}

impl Link {
    pub(super) async fn connect(
        url: &str,
        name: &str,
        topology: &Topology,
        timeout: Duration,
    ) -> Result<Link, BusError> {
        let connection = open(url, name, timeout).await?;
        let setup = async {
            let consume = connection.create_channel().await?;
            let publish = connection.create_channel().await?;
            publish
                .confirm_select(ConfirmSelectOptions::default())
                .await?;
            topology.declare_exchange(&publish).await?;
            Ok::<_, lapin::Error>((consume, publish))
        };
        let (consume, publish) = match tokio::time::timeout(timeout, setup).await {
            Ok(channels) => channels?,
            Err(_) => {
                let _ = tokio::time::timeout(CLOSING, connection.close(200, "OK".into())).await;
                return Err(BusError::Timeout(format!("opening the channels of {name}")));
            }
        };
        Ok(Link {
            connection,
            consume,
            publish,
            declared: Mutex::new(HashSet::new()),
            timeout,
            broken: AtomicBool::new(false),
        })
    }

    /// Whether the connection and both channels are still open, and no exchange on them missed its
    /// deadline.
    pub(super) fn healthy(&self) -> bool {
        !self.broken.load(Ordering::Relaxed)
            && self.connection.status().connected()
            && self.consume.status().connected()
            && self.publish.status().connected()
    }

    /// One exchange with the broker (`what` names it in the error), within the link's timeout; past it,
    /// the link is broken.
    pub(super) async fn within<T>(
        &self,
        what: &str,
        exchange: impl Future<Output = Result<T, lapin::Error>>,
    ) -> Result<T, BusError> {
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(done) => Ok(done?),
            Err(_) => Err(self.expired(what.to_string())),
        }
    }

    /// Marks the link broken after an exchange (`what`) missed its deadline.
    fn expired(&self, what: String) -> BusError {
        self.broken.store(true, Ordering::Relaxed);
        BusError::Timeout(what)
    }

    /// Waits for the broker's confirm of one publish on this link: positive, and the message routed to
    /// a queue (every publish is mandatory, so a message with nowhere to go comes back instead of
    /// vanishing). One that does not come in time breaks the link.
    pub(super) async fn confirmed(
        &self,
        confirm: PublisherConfirm,
        id: &str,
    ) -> Result<(), BusError> {
        let confirmation = match tokio::time::timeout(self.timeout, confirm).await {
            Ok(confirmation) => confirmation?,
            Err(_) => return Err(self.expired(format!("the confirm of message {id}"))),
        };
        match confirmation {
            Confirmation::Ack(None) => Ok(()),
            Confirmation::Ack(Some(returned)) | Confirmation::Nack(Some(returned)) => Err(
                BusError::Refused(id.into(), returned.reply_text.as_str().into()),
            ),
            Confirmation::Nack(None) => {
                Err(BusError::Refused(id.into(), "negative confirm".into()))
            }
            Confirmation::NotRequested => Err(BusError::Refused(
                id.into(),
                "the channel is not in confirm mode".into(),
            )),
        }
    }

    /// A channel of its own, for work that must not touch the others' deliveries.
    pub(super) async fn channel(&self) -> Result<Channel, BusError> {
        self.within("opening a channel", self.connection.create_channel())
            .await
    }

    pub(super) async fn ensure_topic(
        &self,
        topology: &Topology,
        topic: &str,
    ) -> Result<(), BusError> {
        self.ensure(
            topology.queue(topic),
            topology.declare_topic(&self.publish, topic),
        )
        .await
    }

    pub(super) async fn ensure_wait(
        &self,
        topology: &Topology,
        topic: &str,
        wait: Duration,
    ) -> Result<(), BusError> {
        self.ensure(
            topology.wait_queue(topic, wait),
            topology.declare_wait(&self.publish, topic, wait),
        )
        .await
    }

    pub(super) async fn ensure_dead(
        &self,
        topology: &Topology,
        topic: &str,
    ) -> Result<(), BusError> {
        self.ensure(
            topology.dead_queue(topic),
            topology.declare_dead(&self.publish, topic),
        )
        .await
    }

    async fn ensure(
        &self,
        queue: String,
        declare: impl Future<Output = Result<(), lapin::Error>>,
    ) -> Result<(), BusError> {
        if self.declared.lock().contains(&queue) {
            return Ok(());
        }
        self.within(&format!("declaring {queue}"), declare).await?;
        self.declared.lock().insert(queue);
        Ok(())
    }

    /// Closes the connection; deliveries not acknowledged go back to their queues. A broker that does not
    /// answer the close within [`CLOSING`] is not waited for: the connection is given up either way.
    pub(super) async fn close(&self) {
        if self.connection.status().connected() {
            let _ = tokio::time::timeout(CLOSING, self.connection.close(200, "OK".into())).await;
        }
    }
}

/// How long closing a connection waits for the broker's answer.
const CLOSING: Duration = Duration::from_secs(1);

/// What settles a RabbitMQ delivery: its acknowledgement handle (the channel and delivery tag), and the
/// link, kept open while the delivery is held since closing it would give the message back.
#[derive(Debug)]
pub(crate) struct Receipt {
    pub(super) acker: Acker,
    pub(super) link: Arc<Link>,
}
