//! Transcription's jobs: one transcription per recognizer slot, and several callback posts at once (they
//! wait on their receivers, not on this machine), on the core's worker runtime.

pub mod callback;
pub mod transcribe;

use std::sync::Arc;

use analytics_core::topics::Topic;
use analytics_core::worker::{spawn_concurrent, spawn_loop, Batching, Workers};

use crate::state::TranscriptionState;

/// Callback posts under way at once.
const CALLBACK_POSTS: usize = 8;

/// The RabbitMQ relay's window of transcription's topics (the core's `jobs::windows` says why): a
/// transcription is long, one waits; callbacks, what the posts under way take.
pub fn windows() -> Vec<(Topic, u32)> {
    vec![
        (Topic::Transcribe, 1),
        (
            Topic::Callback,
            u32::try_from(CALLBACK_POSTS).unwrap_or(u32::MAX),
        ),
    ]
}

/// Starts the workers of transcription's topics among those configured (all by default) on `workers`.
pub fn spawn(state: Arc<TranscriptionState>, workers: &mut Workers) {
    let stopped = workers.stopped();
    let wanted = state.config.topics();
    let mut handles = Vec::new();
    if wanted.contains(&Topic::Transcribe) {
        for _ in 0..state.config.recognizers() {
            let state = state.clone();
            handles.push(spawn_loop(
                state.core.clone(),
                Topic::Transcribe.name(),
                Batching::ONE,
                stopped.clone(),
                move |_, deliveries| transcribe::process(state.clone(), deliveries),
            ));
        }
    }
    if wanted.contains(&Topic::Callback) {
        let state = state.clone();
        handles.push(spawn_concurrent(
            state.core.clone(),
            Topic::Callback.name(),
            CALLBACK_POSTS,
            stopped,
            move |_, delivery| callback::handle(state.clone(), delivery),
        ));
    }
    workers.extend(handles);
}
