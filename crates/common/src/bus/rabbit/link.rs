//! A connection to the broker with the two channels the adapter works on, and the receipt that ties a
//! delivery to the channel it came from.
//!
//! The channels are separate because they fail separately: a failed publish or declaration closes its
//! channel, and if that were the channel deliveries were fetched on, every message held by every
//! consumer of this process would go back to its queue.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lapin::options::ConfirmSelectOptions;
use lapin::{Acker, Channel, Confirmation, Connection, ConnectionProperties, PublisherConfirm};
use parking_lot::Mutex;

use super::topology::Topology;
use crate::bus::BusError;
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
}

impl Link {
    pub(super) async fn connect(
        url: &str,
        name: &str,
        topology: &Topology,
        timeout: Duration,
    ) -> Result<Link, BusError> {
        let connection = open(url, name, timeout).await?;
        let consume = connection.create_channel().await?;
        let publish = connection.create_channel().await?;
        publish
            .confirm_select(ConfirmSelectOptions::default())
            .await?;
        topology.declare_exchange(&publish).await?;
        Ok(Link {
            connection,
            consume,
            publish,
            declared: Mutex::new(HashSet::new()),
        })
    }

    /// Whether the connection and both channels are still open.
    pub(super) fn healthy(&self) -> bool {
        self.connection.status().connected()
            && self.consume.status().connected()
            && self.publish.status().connected()
    }

    /// A channel of its own, for work that must not touch the others' deliveries.
    pub(super) async fn channel(&self) -> Result<Channel, BusError> {
        Ok(self.connection.create_channel().await?)
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
        declare.await?;
        self.declared.lock().insert(queue);
        Ok(())
    }

    /// Closes the connection; deliveries not acknowledged go back to their queues.
    pub(super) async fn close(&self) {
        if self.connection.status().connected() {
            let _ = self.connection.close(200, "OK".into()).await;
        }
    }
}

/// Waits for the broker's confirm of one publish: positive, and the message routed to a queue (every
/// publish is mandatory, so a message with nowhere to go comes back instead of vanishing).
pub(super) async fn confirmed(
    confirm: PublisherConfirm,
    id: &str,
    timeout: Duration,
) -> Result<(), BusError> {
    let confirmation = tokio::time::timeout(timeout, confirm)
        .await
        .map_err(|_| BusError::Timeout(format!("the confirm of message {id}")))??;
    match confirmation {
        Confirmation::Ack(None) => Ok(()),
        Confirmation::Ack(Some(returned)) | Confirmation::Nack(Some(returned)) => Err(
            BusError::Refused(id.into(), returned.reply_text.as_str().into()),
        ),
        Confirmation::Nack(None) => Err(BusError::Refused(id.into(), "negative confirm".into())),
        Confirmation::NotRequested => Err(BusError::Refused(
            id.into(),
            "the channel is not in confirm mode".into(),
        )),
    }
}

/// What settles a RabbitMQ delivery: its acknowledgement handle (the channel and delivery tag), and the
/// link, kept open while the delivery is held since closing it would give the message back.
#[derive(Debug)]
pub(crate) struct Receipt {
    pub(super) acker: Acker,
    pub(super) link: Arc<Link>,
}
