//! The statements on the outbox table, written once for both databases: those of the embedded queue, and
//! the relay's of the RabbitMQ adapter (`pending`, `relayed`).

use crate::bus::port::{DeadLetter, Delivery, Message, Receipt};
use crate::db::{Binds, Dialect, Reads, StoreError};

/// Messages per statement of `insert_many`, six bound values each: far below either database's limit.
const MESSAGES_PER_STATEMENT: usize = 200;

#[derive(sqlx::FromRow)]
pub(crate) struct LeasedRow {
    seq: i64,
    id: String,
    topic: String,
    share: String,
    body: Vec<u8>,
    traceparent: Option<String>,
    attempt: i32,
}

/// The statement of `ready_shares`: $1 topic, $2 now, $3 how many. The shares of the topic are found by
/// skipping along the index `bus_messages_ready` from one share to the next (one probe each, however
/// many messages a share has), and kept when one of their messages is visible.
pub(crate) fn shares_statement() -> &'static str {
    "WITH RECURSIVE shares(share) AS ( \
         SELECT MIN(share) FROM bus_messages WHERE topic = $1 AND dead_reason IS NULL \
         UNION ALL \
         SELECT (SELECT MIN(b.share) FROM bus_messages b \
                 WHERE b.topic = $1 AND b.dead_reason IS NULL AND b.share > s.share) \
         FROM shares s WHERE s.share IS NOT NULL) \
     SELECT share FROM shares s WHERE s.share IS NOT NULL AND EXISTS ( \
         SELECT 1 FROM bus_messages m WHERE m.topic = $1 AND m.share = s.share \
         AND m.dead_reason IS NULL AND m.visible_at_ms <= $2) \
     LIMIT $3"
}

/// The statement of `lease`: $1 topic, $2 now, $3 the leases' end, $4 their token, $5 how many, $6 the
/// share. The share's oldest ready messages are its first entries in the index `bus_messages_ready`
/// that are visible.
pub(crate) fn lease_statement<D: Dialect>() -> String {
    format!(
        "UPDATE bus_messages SET attempt = attempt + 1, visible_at_ms = $3, lease = $4 \
         WHERE seq IN (SELECT seq FROM bus_messages WHERE topic = $1 AND share = $6 \
                       AND dead_reason IS NULL AND visible_at_ms <= $2 ORDER BY seq LIMIT $5 {}) \
         RETURNING seq, id, topic, share, body, traceparent, attempt",
        D::SKIP_LOCKED
    )
}

#[derive(sqlx::FromRow)]
pub(crate) struct DeadRow {
    id: String,
    topic: String,
    share: String,
    body: Vec<u8>,
    traceparent: Option<String>,
    attempt: i32,
    dead_reason: String,
}

#[derive(sqlx::FromRow)]
pub(crate) struct PendingRow {
    seq: i64,
    id: String,
    topic: String,
    share: String,
    body: Vec<u8>,
    traceparent: Option<String>,
}

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> i32: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<String>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    for<'q> Vec<u8>: Binds<'q, D>,
    (i64,): Reads<D>,
    (String, i64): Reads<D>,
    (String,): Reads<D>,
    DeadRow: Reads<D>,
    LeasedRow: Reads<D>,
    PendingRow: Reads<D>,
{
    /// Inserts `messages`, a statement per `MESSAGES_PER_STATEMENT`.
    pub(crate) async fn insert_many(
        c: &mut D::Connection,
        messages: &[Message],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        for chunk in messages.chunks(MESSAGES_PER_STATEMENT) {
            let rows = (0..chunk.len())
                .map(|i| {
                    let p = i * 6;
                    format!(
                        "(${}, ${}, ${}, ${}, ${}, 0, ${}, ${})",
                        p + 1,
                        p + 2,
                        p + 3,
                        p + 4,
                        p + 5,
                        p + 6,
                        p + 6
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "INSERT INTO bus_messages (id, topic, share, body, traceparent, attempt, visible_at_ms, \
                 created_ms) \
                 VALUES {rows}"
            );
            let mut query = sqlx::query::<D>(&sql);
            for message in chunk {
                query = query
                    .bind(&message.id)
                    .bind(&message.topic)
                    .bind(&message.share)
                    .bind(&message.body)
                    .bind(&message.traceparent)
                    .bind(now_ms);
            }
            query
                .execute(&mut *c)
                .await
                .map_err(|e| StoreError::unique(e, format!("message {}", chunk[0].id)))?;
        }
        Ok(())
    }

    /// Up to `limit` shares of `topic` with a message visible at `now_ms`, by name.
    pub(crate) async fn ready_shares(
        c: &mut D::Connection,
        topic: &str,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar::<D, String>(shares_statement())
            .bind(topic)
            .bind(now_ms)
            .bind(limit)
            .fetch_all(&mut *c)
            .await?)
    }

    /// Leases up to `max` of the oldest visible messages of `share` in `topic` until `until_ms` under the
    /// token `lease`, counting the attempt; in sequence order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn lease(
        c: &mut D::Connection,
        topic: &str,
        share: &str,
        now_ms: i64,
        until_ms: i64,
        lease: i64,
        max: i64,
    ) -> Result<Vec<Delivery>, StoreError> {
        let sql = lease_statement::<D>();
        let mut rows = sqlx::query_as::<D, LeasedRow>(&sql)
            .bind(topic)
            .bind(now_ms)
            .bind(until_ms)
            .bind(lease)
            .bind(max)
            .bind(share)
            .fetch_all(&mut *c)
            .await?;
        // RETURNING promises no order.
        rows.sort_unstable_by_key(|r| r.seq);
        Ok(rows
            .into_iter()
            .map(|r| Delivery {
                message: Message {
                    id: r.id,
                    topic: r.topic,
                    share: r.share,
                    body: r.body,
                    traceparent: r.traceparent,
                },
                attempt: r.attempt as u32,
                receipt: Receipt::Database { seq: r.seq, lease },
            })
            .collect())
    }

    /// Removes those of the messages `seqs` still leased under `lease`; how many that was.
    pub(crate) async fn remove_many(
        c: &mut D::Connection,
        lease: i64,
        seqs: &[i64],
    ) -> Result<u64, StoreError> {
        if seqs.is_empty() {
            return Ok(0);
        }
        let placeholders: Vec<String> = (2..=seqs.len() + 1).map(|i| format!("${i}")).collect();
        let sql = format!(
            "DELETE FROM bus_messages WHERE lease = $1 AND seq IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query::<D>(&sql).bind(lease);
        for seq in seqs {
            query = query.bind(*seq);
        }
        Ok(D::rows_affected(&query.execute(&mut *c).await?))
    }

    /// Removes a message still leased under `lease`; false when the lease was lost.
    pub(crate) async fn remove(
        c: &mut D::Connection,
        seq: i64,
        lease: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>("DELETE FROM bus_messages WHERE seq = $1 AND lease = $2")
            .bind(seq)
            .bind(lease)
            .execute(&mut *c)
            .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    /// Makes a leased message visible again at `visible_at_ms`, its delivery counted as an attempt unless
    /// `uncounted` (the consumer put it off without trying); false when the lease was lost.
    pub(crate) async fn release(
        c: &mut D::Connection,
        seq: i64,
        lease: i64,
        visible_at_ms: i64,
        uncounted: bool,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE bus_messages SET visible_at_ms = $3, lease = NULL, attempt = attempt - $4 \
             WHERE seq = $1 AND lease = $2",
        )
        .bind(seq)
        .bind(lease)
        .bind(visible_at_ms)
        .bind(i32::from(uncounted))
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    /// Extends the lease of a message still leased under `lease` to `until_ms`; false when it was lost.
    pub(crate) async fn renew(
        c: &mut D::Connection,
        seq: i64,
        lease: i64,
        until_ms: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE bus_messages SET visible_at_ms = $3 WHERE seq = $1 AND lease = $2",
        )
        .bind(seq)
        .bind(lease)
        .bind(until_ms)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    /// Moves a leased message to the dead letters of its topic; false when the lease was lost.
    pub(crate) async fn bury(
        c: &mut D::Connection,
        seq: i64,
        lease: i64,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE bus_messages SET dead_reason = $3, lease = NULL WHERE seq = $1 AND lease = $2",
        )
        .bind(seq)
        .bind(lease)
        .bind(reason)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn dead_letters(
        c: &mut D::Connection,
        topic: &str,
        limit: i64,
    ) -> Result<Vec<DeadLetter>, StoreError> {
        let rows = sqlx::query_as::<D, DeadRow>(
            "SELECT id, topic, share, body, traceparent, attempt, dead_reason FROM bus_messages \
             WHERE topic = $1 AND dead_reason IS NOT NULL ORDER BY seq LIMIT $2",
        )
        .bind(topic)
        .bind(limit)
        .fetch_all(&mut *c)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| DeadLetter {
                message: Message {
                    id: r.id,
                    topic: r.topic,
                    share: r.share,
                    body: r.body,
                    traceparent: r.traceparent,
                },
                attempts: r.attempt as u32,
                reason: r.dead_reason,
            })
            .collect())
    }

    /// How many dead letters `topic` holds.
    pub(crate) async fn count_dead(c: &mut D::Connection, topic: &str) -> Result<u64, StoreError> {
        let (count,): (i64,) = sqlx::query_as::<D, (i64,)>(
            "SELECT COUNT(*) FROM bus_messages WHERE topic = $1 AND dead_reason IS NOT NULL",
        )
        .bind(topic)
        .fetch_one(&mut *c)
        .await?;
        Ok(count as u64)
    }

    /// How many messages of `topic` are neither acknowledged nor dead, per share.
    pub(crate) async fn count_waiting(
        c: &mut D::Connection,
        topic: &str,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let rows = sqlx::query_as::<D, (String, i64)>(
            "SELECT share, COUNT(*) FROM bus_messages WHERE topic = $1 AND dead_reason IS NULL \
             GROUP BY share ORDER BY share",
        )
        .bind(topic)
        .fetch_all(&mut *c)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(share, n)| (share, n as u64))
            .collect())
    }

    /// Makes up to `limit` of the oldest dead letters of `topic` ready again at `now_ms`, their attempts
    /// counted from the start; how many.
    pub(crate) async fn revive(
        c: &mut D::Connection,
        topic: &str,
        limit: i64,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE bus_messages SET dead_reason = NULL, attempt = 0, lease = NULL, visible_at_ms = $3 \
             WHERE seq IN (SELECT seq FROM bus_messages WHERE topic = $1 AND dead_reason IS NOT NULL \
                           ORDER BY seq LIMIT $2)",
        )
        .bind(topic)
        .bind(limit)
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done))
    }

    /// The topics with messages not relayed yet (skipping along `bus_messages_ready` from one to the next).
    /// Dead letters of the embedded queue (from before a switch of adapter) stay put.
    pub(crate) async fn pending_topics(c: &mut D::Connection) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar::<D, String>(
            "WITH RECURSIVE topics(topic) AS ( \
                 SELECT MIN(topic) FROM bus_messages WHERE dead_reason IS NULL \
                 UNION ALL \
                 SELECT (SELECT MIN(b.topic) FROM bus_messages b \
                         WHERE b.dead_reason IS NULL AND b.topic > t.topic) \
                 FROM topics t WHERE t.topic IS NOT NULL) \
             SELECT topic FROM topics WHERE topic IS NOT NULL",
        )
        .fetch_all(&mut *c)
        .await?)
    }

    /// The oldest committed messages of `share` in `topic` not relayed yet, with their sequence numbers, in
    /// commit order as far as the sequence tells it.
    pub(crate) async fn pending(
        c: &mut D::Connection,
        topic: &str,
        share: &str,
        limit: i64,
    ) -> Result<Vec<(i64, Message)>, StoreError> {
        let rows = sqlx::query_as::<D, PendingRow>(
            "SELECT seq, id, topic, share, body, traceparent FROM bus_messages \
             WHERE topic = $1 AND share = $2 AND dead_reason IS NULL ORDER BY seq LIMIT $3",
        )
        .bind(topic)
        .bind(share)
        .bind(limit)
        .fetch_all(&mut *c)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let message = Message {
                    id: r.id,
                    topic: r.topic,
                    share: r.share,
                    body: r.body,
                    traceparent: r.traceparent,
                };
                (r.seq, message)
            })
            .collect())
    }

    /// Removes messages the broker has confirmed. Exactly these rows: a row with a smaller sequence number
    /// may have committed after them and still be waiting for its turn.
    pub(crate) async fn relayed(c: &mut D::Connection, seqs: &[i64]) -> Result<(), StoreError> {
        if seqs.is_empty() {
            return Ok(());
        }
        let placeholders: Vec<String> = (1..=seqs.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "DELETE FROM bus_messages WHERE seq IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query::<D>(&sql);
        for seq in seqs {
            query = query.bind(*seq);
        }
        query.execute(&mut *c).await?;
        Ok(())
    }
}
