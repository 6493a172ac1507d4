//! The sink of `/track` (`sink::EventSink`): handlers hand their batch to a few writer tasks, and a task
//! takes every batch waiting at that moment into one transaction (group commit). Under load many batches
//! share one commit and one `COPY`; alone, a batch is written at once. A handler answers only after its
//! batch's transaction committed, so an event reported stored is stored; when the transaction fails, every
//! batch in it is reported not stored and nothing of it remains.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use common::db::{Database, StoreError};
use tokio::sync::{mpsc, oneshot, Mutex};

use crate::model::NewEvent;
use crate::sink::{EventSink, WriteError};
use crate::store::{self, Fresh, Partitions};

/// Rows one transaction takes at most; batches beyond wait for the next.
const MAX_ROWS_PER_WRITE: usize = 30_000;
/// Batches that may wait for a writer before senders are made to wait too.
const QUEUE: usize = 1024;

struct Job {
    events: Vec<NewEvent>,
    now_ms: i64,
    reply: oneshot::Sender<Result<Fresh, WriteError>>,
}

#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts `tasks` writer tasks on the current runtime, and the hourly round that prepares the
    /// coming months and removes events older than `retention_days` (0: kept for ever, `retention`).
    /// They end when the last `Writer` is dropped.
    pub fn start(db: Database, tasks: usize, dedup_window_ms: i64, retention_days: u32) -> Writer {
        let (jobs, queue) = mpsc::channel::<Job>(QUEUE);
        let queue = Arc::new(Mutex::new(queue));
        let partitions = Arc::new(Partitions::default());
        for _ in 0..tasks.max(1) {
            let (db, queue, partitions) = (db.clone(), queue.clone(), partitions.clone());
            tokio::spawn(async move {
                while let Some(group) = next_group(&queue).await {
                    write_group(&db, &partitions, group, dedup_window_ms).await;
                }
            });
        }
        let alive = jobs.downgrade();
        tokio::spawn(crate::retention::run(
            db.clone(),
            partitions,
            retention_days,
            move || alive.upgrade().is_some(),
        ));
        tokio::spawn(forget_old_insert_ids(db, dedup_window_ms, jobs.downgrade()));
        Writer { jobs }
    }
}

#[async_trait]
impl EventSink for Writer {
    async fn write(&self, events: Vec<NewEvent>, now_ms: i64) -> Result<Fresh, WriteError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                events,
                now_ms,
                reply,
            })
            .await
            .map_err(|_| WriteError::Unavailable("the service is shutting down".into()))?;
        answer
            .await
            .map_err(|_| WriteError::Unavailable("the write was abandoned".into()))?
    }
}

/// The first waiting batch and whatever else waits behind it, up to the row limit.
async fn next_group(queue: &Mutex<mpsc::Receiver<Job>>) -> Option<Vec<Job>> {
    let mut queue = queue.lock().await;
    let first = queue.recv().await?;
    let mut rows = first.events.len();
    let mut group = vec![first];
    while rows < MAX_ROWS_PER_WRITE {
        match queue.try_recv() {
            Ok(job) => {
                rows += job.events.len();
                group.push(job);
            }
            Err(_) => break,
        }
    }
    Some(group)
}

async fn write_group(db: &Database, partitions: &Partitions, group: Vec<Job>, window_ms: i64) {
    let now_ms = group.iter().map(|j| j.now_ms).max().unwrap_or_default();
    let all: Vec<&NewEvent> = group.iter().flat_map(|j| j.events.iter()).collect();
    let result = store::insert_events(db, partitions, &all, now_ms - window_ms, now_ms).await;
    drop(all);
    match result {
        Ok(written) => {
            let mut rest = &written.fresh[..];
            for job in group {
                let (mine, others) = rest.split_at(job.events.len());
                rest = others;
                let reply = answer(&job, &written.missing, mine.to_vec());
                let _ = job.reply.send(reply);
            }
        }
        // One batch the database refuses must not fail the others it was grouped with: each is tried
        // on its own before anyone is told.
        Err(_) if group.len() > 1 => {
            for job in group {
                let refs: Vec<&NewEvent> = job.events.iter().collect();
                let result =
                    store::insert_events(db, partitions, &refs, job.now_ms - window_ms, job.now_ms)
                        .await;
                drop(refs);
                let reply = match result {
                    Ok(written) => answer(&job, &written.missing, written.fresh),
                    Err(e) => Err(unavailable(&e)),
                };
                let _ = job.reply.send(reply);
            }
        }
        Err(e) => {
            let message = unavailable(&e);
            for job in group {
                let _ = job.reply.send(Err(message.clone()));
            }
        }
    }
}

/// Every few minutes, forgets the insert ids that fell out of the window, so their table holds one
/// window's worth. Correctness does not depend on it: an id older than the window is claimed anew anyway.
/// Ends with the writer.
async fn forget_old_insert_ids(db: Database, window_ms: i64, alive: mpsc::WeakSender<Job>) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(600));
    loop {
        every.tick().await;
        if alive.upgrade().is_none() {
            return;
        }
        let before = chrono::Utc::now().timestamp_millis() - window_ms;
        if let Err(e) = store::forget_insert_ids(&db, before).await {
            tracing::warn!(error = %e, "forgetting old insert ids failed; trying again later");
        }
    }
}

/// A job's answer from its share of a write.
fn answer(job: &Job, missing: &HashSet<String>, fresh: Fresh) -> Result<Fresh, WriteError> {
    if job.events.iter().any(|e| missing.contains(&e.app_key)) {
        Err(WriteError::ProjectGone)
    } else {
        Ok(fresh)
    }
}

/// What a sender is told when its batch could not be written: retry later. The cause is logged.
fn unavailable(e: &StoreError) -> WriteError {
    tracing::error!(error = %e, "storing events failed");
    WriteError::Unavailable(
        "the events could not be stored just now; nothing of this batch was stored, send it again"
            .into(),
    )
}
