//! The PocketSphinx adapter of the recognizer port. Loading the models takes about half a second and
//! some 40 MB, so decoders are made on first need, at most one per configured worker, and handed from
//! job to job; a decoder runs on the blocking thread pool, since a recognition is seconds of CPU work
//! that must not hold up the async workers.

use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use pocketsphinx::Decoder;
use tokio::sync::Semaphore;

use super::engine::{Segment, Transcriber, Word};
use crate::error::SpeechError;

pub struct SphinxEngine {
    config: Arc<pocketsphinx::Config>,
    /// Decoders not in use. Never more than `workers` exist: one per permit.
    idle: Arc<Mutex<Vec<Decoder>>>,
    /// One per decoder at work. The blocking task holds its permit and hands its decoder back before
    /// letting the permit go: a caller that gives up (the other channel of a stereo call failed) leaves
    /// the decoding to finish, and it still counts.
    permits: Arc<Semaphore>,
}

impl SphinxEngine {
    /// An engine of at most `workers` decoders (at least one) with the models of `config`.
    pub fn new(config: pocketsphinx::Config, workers: usize) -> SphinxEngine {
        SphinxEngine {
            config: Arc::new(config),
            idle: Arc::new(Mutex::new(Vec::new())),
            permits: Arc::new(Semaphore::new(workers.max(1))),
        }
    }

    /// How many decoders have been made and are idle now.
    pub fn idle_decoders(&self) -> usize {
        self.idle.lock().len()
    }
}

#[async_trait]
impl Transcriber for SphinxEngine {
    async fn recognize(&self, samples: Arc<[i16]>) -> Result<Vec<Segment>, SpeechError> {
        if samples.is_empty() {
            return Ok(Vec::new());
        }
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| SpeechError::Engine("the PocketSphinx engine is closed".into()))?;
        let idle = self.idle.clone();
        let config = self.config.clone();
        let result = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let popped = idle.lock().pop();
            let mut decoder = match popped {
                Some(decoder) => decoder,
                None => Decoder::new(&config)?,
            };
            let result = decoder.decode(&samples);
            // A decoder that failed is dropped rather than trusted again (a new one is made when needed).
            if result.is_ok() {
                idle.lock().push(decoder);
            }
            result
        })
        .await
        .map_err(|e| SpeechError::Engine(format!("PocketSphinx worker failed: {e}")))?;
        let utterances = result.map_err(|e| SpeechError::Engine(e.to_string()))?;
        Ok(utterances
            .into_iter()
            .map(|u| Segment {
                words: u
                    .words
                    .into_iter()
                    .map(|w| Word {
                        word: w.word,
                        start: w.start,
                        end: w.end,
                        confidence: w.confidence,
                    })
                    .collect(),
            })
            .collect())
    }

    fn name(&self) -> &str {
        "pocketsphinx"
    }
}
