//! Where `/track` hands its checked events. A sink stores a batch whole or not at all and says, per
//! event, whether it was new; the handler answers the sender from that alone. The service's sink is the
//! group-commit writer to its database (`writer::Writer`); the tests put others in its place to see how
//! `/track` answers each outcome.

use async_trait::async_trait;

use crate::model::NewEvent;
use crate::store::Fresh;

#[async_trait]
pub trait EventSink: Send + Sync {
    /// Stores `events` (received at `now_ms`); per event, whether it was new. An error says why nothing
    /// was stored.
    async fn write(&self, events: Vec<NewEvent>, now_ms: i64) -> Result<Fresh, WriteError>;
}

/// Why a batch was not stored; nothing of it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// The database failed: sending the batch again may succeed.
    Unavailable(String),
    /// The project was deleted while the batch was on its way.
    ProjectGone,
}
