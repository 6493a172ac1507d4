//! The relay: moves committed messages from the outbox table to the broker. Each batch is published as
//! persistent messages to the exchange, every publish is confirmed, and only then are the rows deleted —
//! so a crash between the publish and the delete publishes the message again (at least once) and nothing
//! committed is ever lost. While the broker or the database is unreachable the rows simply wait, and the
//! relay tries again with growing pauses.
//!
//! The broker gets only what its consumers are about to take: a topic's messages are relayed while its
//! queue holds fewer ready messages than the topic's window, share by share in turn (`turns`). The
//! backlog waits in the outbox, where a company that has just published is served next, instead of
//! in the broker's queue behind every message published before it.

use std::sync::Arc;
use std::time::Duration;

use lapin::options::BasicPublishOptions;
use tokio::sync::watch;

use super::link::Link;
use super::outbox::Outbox;
use super::{codec, Inner};
use crate::bus::port::BusError;
use crate::bus::turns::Take;

/// The first pause after a failure; each further failure doubles it up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How often a relay that does not lead asks again whether it may.
const LEADER_RETRY: Duration = Duration::from_secs(1);
/// After a publish in this process, how soon the relay looks for its commit (then doubling up to the
/// poll interval): the commit usually follows within milliseconds.
const QUICK: Duration = Duration::from_millis(2);
/// The most rows one batch of a topic takes, whatever the options say: their sequence numbers are the
/// parameters of one `DELETE`, and both databases cap how many a statement may have.
const MAX_BATCH: u32 = 1000;

enum Ended {
    Stopped,
    NotLeader,
    Failed(BusError),
}

/// Runs until `stop` turns true (or its sender is gone).
pub(super) async fn run(inner: Arc<Inner>, mut stop: watch::Receiver<bool>) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        if *stop.borrow() {
            return;
        }
        let pause = match session(&inner, &mut stop, &mut backoff).await {
            Ended::Stopped => return,
            Ended::NotLeader => LEADER_RETRY,
            Ended::Failed(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis() as u64, "bus relay interrupted");
                let pause = backoff;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                pause
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.changed() => return,
        }
    }
}

/// Leads the outbox, connects, and relays until something fails or the relay is stopped.
async fn session(inner: &Inner, stop: &mut watch::Receiver<bool>, backoff: &mut Duration) -> Ended {
    let mut outbox = match Outbox::lead(&inner.db).await {
        Ok(Some(outbox)) => outbox,
        Ok(None) => return Ended::NotLeader,
        Err(e) => return Ended::Failed(e.into()),
    };
    let ended = match Link::connect(
        &inner.url,
        "bus-relay",
        &inner.topology,
        inner.options.timeout,
    )
    .await
    {
        Ok(link) => {
            *backoff = FIRST_BACKOFF;
            let ended = relay(inner, &mut outbox, &link, stop).await;
            link.close().await;
            ended
        }
        Err(e) => Ended::Failed(e),
    };
    outbox.close().await;
    ended
}

async fn relay(
    inner: &Inner,
    outbox: &mut Outbox,
    link: &Link,
    stop: &mut watch::Receiver<bool>,
) -> Ended {
    let mut nap = inner.options.poll;
    loop {
        // Taken before looking, so a publish between the look and the nap is not missed.
        let published = inner.published.notified();
        let taken = inner.taken.notified();
        tokio::pin!(published, taken);
        match batch(inner, outbox, link).await {
            Ok(0) => {}
            // More may be waiting right behind.
            Ok(_) => continue,
            Err(e) => return Ended::Failed(e),
        }
        tokio::select! {
            _ = &mut published => nap = QUICK,
            _ = &mut taken => nap = QUICK,
            _ = tokio::time::sleep(nap) => nap = (nap * 2).min(inner.options.poll),
            _ = stop.changed() => return Ended::Stopped,
        }
    }
}

/// Relays what each topic's window has room for; how many messages that was.
async fn batch(inner: &Inner, outbox: &mut Outbox, link: &Link) -> Result<usize, BusError> {
    let mut relayed = 0;
    for topic in outbox.topics().await? {
        relayed += relay_topic(inner, outbox, link, &topic).await?;
    }
    if relayed > 0 {
        inner.relayed.notify_waiters();
    }
    Ok(relayed)
}

/// Publishes the oldest pending messages of `topic`, share by share in turn, as many as its queue has
/// room for below its window (at most a batch); waits for all their confirms, then deletes their rows.
async fn relay_topic(
    inner: &Inner,
    outbox: &mut Outbox,
    link: &Link,
    topic: &str,
) -> Result<usize, BusError> {
    // The topic's queue exists before its first message is published: a message routed nowhere would be
    // lost (and, being mandatory, would come back refused).
    link.ensure_topic(&inner.topology, topic).await?;
    let ready = inner.topology.ready_count(&link.publish, topic);
    let ready = link.within("counting a queue", ready).await?;
    let room = inner
        .options
        .window(topic)
        .saturating_sub(ready)
        .min(inner.options.batch.clamp(1, MAX_BATCH));
    if room == 0 {
        return Ok(0);
    }
    let shares = outbox.shares(topic).await?;
    let mut take = Take::new(inner.turns.order(topic, shares), room as usize);
    let mut rows = Vec::new();
    while let Some((share, part)) = take.next() {
        let part = i64::try_from(part).unwrap_or(i64::MAX);
        let got = outbox.pending(topic, &share, part).await?;
        take.got(got.len());
        rows.extend(got);
    }
    inner.turns.served(topic, take.served());
    if rows.is_empty() {
        return Ok(0);
    }
    let exchange = inner.topology.exchange();
    let mut confirms = Vec::with_capacity(rows.len());
    for (_, message) in &rows {
        let properties = codec::properties(message, Default::default());
        let publish = link.publish.basic_publish(
            exchange.as_str().into(),
            message.topic.as_str().into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &message.body,
            properties,
        );
        confirms.push(link.within("a publish", publish).await?);
    }
    for ((_, message), confirm) in rows.iter().zip(confirms) {
        link.confirmed(confirm, &message.id).await?;
    }
    let seqs: Vec<i64> = rows.iter().map(|(seq, _)| *seq).collect();
    outbox.relayed(&seqs).await?;
    Ok(rows.len())
}
