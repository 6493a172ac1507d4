//! A bus message as an AMQP message and back. The body travels as is; the message id is the AMQP
//! `message_id`; the W3C trace context is a `traceparent` header (the name the W3C gives it, which
//! tracing tools look for on AMQP messages too); the attempts already made travel in `bus-attempts` on
//! the copies a retry or a dead letter publishes, since a copy is a new message to the broker; the share
//! travels in `bus-share`.

use lapin::message::Delivery as AmqpDelivery;
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::BasicProperties;

use crate::bus::port::{BusError, DeadLetter, Message};

const TRACEPARENT: &str = "traceparent";
/// Whose work the message is (`Message::share`).
const SHARE: &str = "bus-share";
/// Deliveries of the message made before this copy was published.
const ATTEMPTS: &str = "bus-attempts";
/// Why a dead letter was set aside.
const REASON: &str = "bus-reason";
/// Redeliveries counted by a quorum queue (a consumer died, or gave the message back).
const DELIVERY_COUNT: &str = "x-delivery-count";
/// Why the broker dead-lettered a message itself.
const FIRST_DEATH_REASON: &str = "x-first-death-reason";

/// AMQP delivery mode 2: the broker writes the message to disk before it confirms it.
const PERSISTENT: u8 = 2;

/// Properties of a persistent message carrying `message`'s id and trace context, plus `headers`.
pub(super) fn properties(message: &Message, mut headers: FieldTable) -> BasicProperties {
    if let Some(traceparent) = &message.traceparent {
        headers.insert(TRACEPARENT.into(), text(traceparent));
    }
    if !message.share.is_empty() {
        headers.insert(SHARE.into(), text(&message.share));
    }
    BasicProperties::default()
        .with_delivery_mode(PERSISTENT)
        .with_message_id(message.id.as_str().into())
        .with_timestamp(chrono::Utc::now().timestamp().max(0) as u64)
        .with_headers(headers)
}

/// Headers of a copy published after `attempts` deliveries (a retry), and of a dead letter with its
/// reason.
pub(super) fn copy_headers(attempts: u32, reason: Option<&str>) -> FieldTable {
    let mut headers = FieldTable::default();
    headers.insert(ATTEMPTS.into(), AMQPValue::LongLongInt(i64::from(attempts)));
    if let Some(reason) = reason {
        headers.insert(REASON.into(), text(reason));
    }
    headers
}

/// The message a delivery from `topic`'s queue carries, and which attempt this delivery is.
pub(super) fn decode(topic: &str, delivery: &AmqpDelivery) -> (Message, u32) {
    let before = count(delivery, ATTEMPTS).unwrap_or(0);
    // A redelivery (the consumer holding it died) is another attempt. Quorum queues count them; where
    // the count is missing (other queue types, or brokers that count only explicit returns) the
    // redelivered flag says at least one.
    let redeliveries = count(delivery, DELIVERY_COUNT)
        .unwrap_or(0)
        .max(u32::from(delivery.redelivered));
    let attempt = before.saturating_add(redeliveries).saturating_add(1);
    (message(topic, delivery), attempt)
}

/// A dead letter read from `topic`'s dead-letter queue.
pub(super) fn dead_letter(topic: &str, delivery: &AmqpDelivery) -> DeadLetter {
    let reason = header(delivery, REASON)
        .and_then(as_text)
        .or_else(|| {
            header(delivery, FIRST_DEATH_REASON)
                .and_then(as_text)
                .map(|r| format!("set aside by the broker ({r})"))
        })
        .unwrap_or_else(|| "set aside by the broker".into());
    DeadLetter {
        message: message(topic, delivery),
        attempts: count(delivery, ATTEMPTS).unwrap_or(1).max(1),
        reason,
    }
}

/// Checks that `topic` can be a routing key and part of a queue name as is (see `topology`).
pub(super) fn check_topic(topic: &str) -> Result<(), BusError> {
    let valid = !topic.is_empty()
        && topic.len() <= 200
        && topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(BusError::InvalidTopic(topic.into()))
    }
}

fn message(topic: &str, delivery: &AmqpDelivery) -> Message {
    let id = match delivery.properties.message_id() {
        Some(id) => id.as_str().to_string(),
        // Not published through the bus; a fresh id still lets consumers tell messages apart.
        None => uuid::Uuid::now_v7().simple().to_string(),
    };
    Message {
        id,
        topic: topic.to_string(),
        share: header(delivery, SHARE)
            .and_then(as_text)
            .unwrap_or_default(),
        body: delivery.data.clone(),
        traceparent: header(delivery, TRACEPARENT).and_then(as_text),
    }
}

fn header<'a>(delivery: &'a AmqpDelivery, name: &str) -> Option<&'a AMQPValue> {
    delivery
        .properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(name))
}

fn count(delivery: &AmqpDelivery, name: &str) -> Option<u32> {
    let value = header(delivery, name)?;
    let n: i128 = match value {
        AMQPValue::ShortShortInt(n) => (*n).into(),
        AMQPValue::ShortShortUInt(n) => (*n).into(),
        AMQPValue::ShortInt(n) => (*n).into(),
        AMQPValue::ShortUInt(n) => (*n).into(),
        AMQPValue::LongInt(n) => (*n).into(),
        AMQPValue::LongUInt(n) => (*n).into(),
        AMQPValue::LongLongInt(n) => (*n).into(),
        AMQPValue::Timestamp(n) => (*n).into(),
        _ => return None,
    };
    Some(u32::try_from(n.max(0)).unwrap_or(u32::MAX))
}

fn as_text(value: &AMQPValue) -> Option<String> {
    match value {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_string()),
        _ => None,
    }
}

fn text(value: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_plain_names() {
        for ok in ["jobs", "transcription.requested", "a_b-c.9"] {
            assert!(check_topic(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a#", "a.*", "a:dead", "a b", &"x".repeat(201)] {
            assert!(check_topic(bad).is_err(), "{bad}");
        }
    }
}
