//! The dead letters of the workers' topics, for operators: a message whose work can never succeed as
//! things are (a document the index refuses, a transcript that cannot be read) is set aside rather than
//! retried forever or lost. Each topic's count is the metric `bus_dead_letters`; the commands
//! `dead-letters <topic>` and `replay-dead <topic>` list them and put them back in their queue once what
//! failed them is mended (docs/operations.md, Sharing the platform between companies). Beside them, the
//! metric `bus_waiting` counts the messages waiting their company's turn.

use common::bus::{BusError, DeadLetter};
use common::http::Series;

use crate::state::AnalyticsState;
use crate::topics::Topic;

/// How many dead letters each topic holds; a topic whose count cannot be read now is left out.
pub async fn counts(state: &AnalyticsState) -> Series {
    let mut counts = Vec::new();
    for topic in Topic::ALL.map(Topic::name) {
        match state.bus.dead_letter_count(topic).await {
            Ok(count) => counts.push((vec![topic.to_string()], count as i64)),
            Err(e) => tracing::warn!(topic, error = %e, "could not count dead letters"),
        }
    }
    counts
}

/// How many messages of each topic wait in the database, per company (`Bus::waiting`).
pub async fn waiting(state: &AnalyticsState) -> Series {
    let mut waiting = Vec::new();
    for topic in Topic::ALL.map(Topic::name) {
        match state.bus.waiting(topic).await {
            Ok(shares) => waiting.extend(
                shares
                    .into_iter()
                    .map(|(company, n)| (vec![topic.to_string(), company], n as i64)),
            ),
            Err(e) => tracing::warn!(topic, error = %e, "could not count waiting messages"),
        }
    }
    waiting
}

/// The oldest `limit` dead letters of `topic`.
pub async fn list(
    state: &AnalyticsState,
    topic: &str,
    limit: i64,
) -> Result<Vec<DeadLetter>, BusError> {
    state.bus.dead_letters(topic, limit).await
}

/// Puts up to `limit` of the oldest dead letters of `topic` back in its queue; how many.
pub async fn replay(state: &AnalyticsState, topic: &str, limit: u64) -> Result<u64, BusError> {
    let replayed = state.bus.replay_dead(topic, limit).await?;
    tracing::info!(topic, replayed, "dead letters put back in their queue");
    Ok(replayed)
}

/// The operator commands, the same under `analytics-service` and `speechd`: `dead-letters <topic>` prints
/// the oldest `limit` (100 unless given) a JSON object a line; `replay-dead <topic>` puts back up to
/// `limit` (all unless given) and says how many.
pub async fn command(
    state: &AnalyticsState,
    replay_them: bool,
    topic_name: &str,
    limit: Option<u64>,
) -> anyhow::Result<()> {
    let topic = Topic::parse(topic_name).map_err(anyhow::Error::msg)?.name();
    if replay_them {
        let replayed = replay(state, topic, limit.unwrap_or(u64::MAX)).await?;
        println!("{replayed} dead letters of {topic} put back in their queue");
    } else {
        let limit = i64::try_from(limit.unwrap_or(100)).unwrap_or(i64::MAX);
        for dead in list(state, topic, limit).await? {
            println!("{}", describe(&dead));
        }
    }
    Ok(())
}

/// A dead letter as the listing command prints it, one JSON object a line.
pub fn describe(dead: &DeadLetter) -> serde_json::Value {
    serde_json::json!({
        "id": dead.message.id,
        "topic": dead.message.topic,
        "attempts": dead.attempts,
        "reason": dead.reason,
        "bytes": dead.message.body.len(),
    })
}
