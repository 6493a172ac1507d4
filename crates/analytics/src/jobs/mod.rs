//! The analytics jobs: what each bus topic's messages ask for, and which worker loop (`crate::worker`)
//! runs them, in batches or one at a time. Workers run in the service process (`run_workers`) or on
//! their own (`analytics-service worker`).

pub mod callback;
pub mod dead;
pub mod delete;
pub mod metadata;
pub mod reindex;
pub mod rescore;
pub mod score;
pub mod transcribe;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::state::AnalyticsState;
use crate::topics::Topic;
use crate::worker::{one_by_one, spawn_concurrent, spawn_loop, Batching, Workers};

/// Callback posts wait on receivers, not on this machine: several go out at once.
const CALLBACK_POSTS: usize = 8;

/// The RabbitMQ relay's window of each topic (`RabbitOptions::windows`): about what one worker takes in
/// one look, so the broker holds no more of a topic than its workers are about to take, and a company's
/// message waits behind at most that many of another company's (the rest wait their turn in the
/// outbox). Transcriptions, deletions and rescoring jobs are long: one waits.
pub fn windows() -> Vec<(String, u32)> {
    let batch = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Topic::ALL
        .into_iter()
        .map(|topic| {
            let window = match topic {
                Topic::Reindex => batch(reindex::BATCHING.most),
                Topic::Metadata => batch(metadata::BATCHING.most),
                Topic::Score => batch(score::BATCH),
                Topic::Delete | Topic::Rescore | Topic::Transcribe => 1,
                Topic::Callback => batch(CALLBACK_POSTS),
            };
            (topic.name().to_string(), window)
        })
        .collect()
}

/// Starts the workers of the configured topics (all by default): reindexing and scoring in batches (an
/// index write, a transaction per batch), deletions and rescore jobs one at a time, one transcription
/// per recognizer slot, and several callback posts at once. The deletion workers also sweep the object
/// store of what nothing owns (`crate::orphans`).
pub fn spawn(state: Arc<AnalyticsState>) -> Workers {
    let (stop, stopped) = watch::channel(false);
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
    if runs(Topic::Transcribe) {
        for _ in 0..state.config.recognizers() {
            handles.push(spawn_loop(
                state.clone(),
                Topic::Transcribe.name(),
                Batching::ONE,
                stopped.clone(),
                transcribe::process,
            ));
        }
    }
    if runs(Topic::Callback) {
        handles.push(spawn_concurrent(
            state.clone(),
            Topic::Callback.name(),
            CALLBACK_POSTS,
            stopped.clone(),
            callback::handle,
        ));
    }
    Workers::new(stop, handles)
}
