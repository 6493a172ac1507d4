//! The core's jobs: what each of its bus topics' messages ask for, and which worker loop
//! (`crate::worker`) runs them, in batches or one at a time (the transcription crate runs the
//! transcription and callback topics). Workers run in the service process (`run_workers`) or on their
//! own (`analytics-service worker`).

pub mod dead;
pub mod delete;
pub mod metadata;
pub mod reindex;
pub mod rescore;
pub mod score;

use std::sync::Arc;
use std::time::Duration;

use crate::state::AnalyticsState;
use crate::topics::Topic;
use crate::worker::{one_by_one, spawn_loop, Batching, Workers};

/// The RabbitMQ relay's window of each of the core's topics (`RabbitOptions::windows`): about what one
/// worker takes in one look, so the broker holds no more of a topic than its workers are about to take,
/// and a company's message waits behind at most that many of another company's (the rest wait their
/// turn in the outbox). Deletions and rescoring jobs are long: one waits.
pub fn windows() -> Vec<(Topic, u32)> {
    let batch = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    vec![
        (Topic::Reindex, batch(reindex::BATCHING.most)),
        (Topic::Metadata, batch(metadata::BATCHING.most)),
        (Topic::Score, batch(score::BATCH)),
        (Topic::Delete, 1),
        (Topic::Rescore, 1),
    ]
}

/// Starts the workers of the configured topics among the core's (all by default) on `workers`:
/// reindexing and scoring in batches (an index write, a transaction per batch), deletions and rescore
/// jobs one at a time. The deletion workers also sweep the object store of what nothing owns
/// (`crate::orphans`).
pub fn spawn(state: Arc<AnalyticsState>, workers: &mut Workers) {
    let stopped = workers.stopped();
    let wanted = state.config.topics();
    let runs = |topic: Topic| wanted.contains(&topic);
    let mut handles = Vec::new();
    if runs(Topic::Reindex) {
        handles.push(spawn_loop(
            state.clone(),
            Topic::Reindex.name(),
            reindex::BATCHING,
            stopped.clone(),
            reindex::process,
        ));
    }
    if runs(Topic::Metadata) {
        handles.push(spawn_loop(
            state.clone(),
            Topic::Metadata.name(),
            metadata::BATCHING,
            stopped.clone(),
            metadata::process,
        ));
    }
    if runs(Topic::Delete) {
        handles.push(spawn_loop(
            state.clone(),
            Topic::Delete.name(),
            Batching::ONE,
            stopped.clone(),
            |state, jobs| one_by_one(state, Topic::Delete.name(), jobs, delete::handle),
        ));
    }
    if runs(Topic::Score) {
        handles.push(spawn_loop(
            state.clone(),
            Topic::Score.name(),
            Batching::up_to(score::BATCH),
            stopped.clone(),
            score::process,
        ));
    }
    let sweep_every = state.config.orphan_sweep_s;
    if runs(Topic::Delete) && sweep_every > 0 {
        handles.push(crate::orphans::spawn(
            state.clone(),
            Duration::from_secs(sweep_every),
            Duration::from_secs(state.config.orphan_grace_s),
            stopped.clone(),
        ));
    }
    if runs(Topic::Rescore) {
        handles.push(spawn_loop(
            state.clone(),
            Topic::Rescore.name(),
            Batching::ONE,
            stopped.clone(),
            |state, jobs| one_by_one(state, Topic::Rescore.name(), jobs, rescore::handle),
        ));
    }
    workers.extend(handles);
}
