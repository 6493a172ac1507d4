//! The recognizer port. Transcription jobs depend on this trait only, so the recognizer in this process
//! (PocketSphinx, [`super::sphinx`]) and one reached over HTTP ([`super::http_engine`]) are chosen by
//! configuration, and tests can put a real engine behind either.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::SpeechError;

/// One recognized word; times in seconds from the start of the samples recognized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Word {
    pub word: String,
    pub start: f64,
    pub end: f64,
    /// 0 to 1.
    pub confidence: f64,
}

/// One recognizer utterance (speech between two pauses) with its words, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub words: Vec<Word>,
}

impl Segment {
    /// The first word's start (0 without words).
    pub fn start(&self) -> f64 {
        self.words.first().map_or(0.0, |w| w.start)
    }

    /// The last word's end (0 without words).
    pub fn end(&self) -> f64 {
        self.words.last().map_or(0.0, |w| w.end)
    }
}

/// A speech recognizer.
#[async_trait]
pub trait Transcriber: Send + Sync {
    /// Recognizes 16 kHz mono samples and returns the utterances that have words, in time order.
    async fn recognize(&self, samples: Arc<[i16]>) -> Result<Vec<Segment>, SpeechError>;

    /// A short name for logs and metrics (`pocketsphinx`, `http`).
    fn name(&self) -> &str;
}
