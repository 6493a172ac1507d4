//! Transcription requests of the analytics API (docs/transcription.md): an uploaded recording is kept in
//! the object store, its request row and its job message commit together (`submit`), a transcription
//! worker turns it into a transcript (`jobs::transcribe`), and the result is returned to a caller that
//! waits for it (`progress::wait`), posted to its callback (`jobs::callback`, signed with the company's
//! callback secret), or stored as a call of its folder through the core's `calls`. `GET
//! /transcribe/<requestid>` reads its progress (`Progress`). It stands on `analytics-core` (its state,
//! access checks, errors, outbox and worker runtime); the `analytics` crate serves both as one service.

pub mod jobs;
pub mod keys;
pub mod outbox;
pub mod progress;
pub mod routes;
pub mod state;
pub mod submit;

pub use progress::Progress;
pub use state::TranscriptionState;
pub use submit::{submit, Submission};
