//! The message bus port. A change and the message announcing it commit together: `Bus::publish` writes
//! the message into the change's own transaction (a transactional outbox, table `bus_messages`), so no
//! message announces what did not happen and none is left unannounced. Delivery is at least once:
//! a consumer leases a message, does its work, commits, and only then acknowledges; a consumer that dies
//! before acknowledging loses its lease and the message is delivered again. A message that keeps failing
//! is retried with growing waits, then set aside as a dead letter, never lost and never retried forever.
//!
//! Adapters, both passing the contract suite in `tests/bus_contract.rs`:
//! - `DatabaseQueue`, the embedded default: consumers lease the outbox rows themselves, in the service's
//!   own database, so nothing is lost across restarts either.
//! - `RabbitBus`, for production: a relay task moves committed outbox rows to RabbitMQ (a durable topic
//!   exchange, one quorum queue per topic), deleting each row only after the broker confirmed it, so a
//!   crash or an outage in between publishes a message again rather than losing it. Consumers fetch with
//!   manual acknowledgement: the lease is the consumer's channel, and a message held by a consumer that
//!   dies goes back to its queue. Retries wait in per-wait queues that expire them back into the topic's
//!   queue; dead letters go to a dead-letter queue per topic. Every copy is confirmed before the original
//!   is acknowledged. Details in `rabbit`.
//!
//! Fairness: a message may name its share (whose work it is: a company). Both adapters hand a topic's
//! messages out share by share (`turns`), so one company's backlog does not keep another company's
//! messages waiting behind it: the embedded queue when a consumer leases, the RabbitMQ adapter when its
//! relay moves messages to the broker, which it does only while the topic's queue holds fewer ready
//! messages than its window (the backlog waits in the outbox, where turns can be taken).
//!
//! A `Delivery` carries a private receipt of the adapter that made it, so only that adapter can settle it.

mod port;
mod queue;
mod rabbit;
mod sql;
mod turns;

use crate::db::Migrations;

pub use port::{Bus, BusError, DeadLetter, Delivery, Message, Retried, RetryPolicy};
pub use queue::DatabaseQueue;
pub use rabbit::{RabbitBus, RabbitOptions, Topology};

/// The bus's table (versions 4001 to 4999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};
