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
use super::SpeechError;

pub struct SphinxEngine {
    config: Arc<pocketsphinx::Config>,
    /// Decoders not in use. Never more than `workers` exist: one per permit.
    idle: Mutex<Vec<Decoder>>,
    /// One per decoder at work. A permit is held by the blocking task itself, not by the future awaiting
    /// it: a caller that gives up (the other channel of a stereo call failed) leaves the decoding to
    /// finish, and it still counts.
    permits: Arc<Semaphore>,
    workers: usize,
}

impl SphinxEngine {
    /// An engine of at most `workers` decoders (at least one) with the models of `config`.
    pub fn new(config: pocketsphinx::Config, workers: usize) -> SphinxEngine {
        SphinxEngine {
            config: Arc::new(config),
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(workers.max(1))),
            workers: workers.max(1),
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
        let decoder = self.idle.lock().pop();
        let config = self.config.clone();
        let (decoder, result) = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut decoder = match decoder {
                Some(decoder) => decoder,
                None => match Decoder::new(&config) {
                    Ok(decoder) => decoder,
                    Err(e) => return (None, Err(e)),
                },
            };
            let result = decoder.decode(&samples);
            (Some(decoder), result)
        })
        .await
        .map_err(|e| SpeechError::Engine(format!("PocketSphinx worker failed: {e}")))?;
        let utterances = result.map_err(|e| SpeechError::Engine(e.to_string()))?;
        // A decoder that failed is dropped rather than trusted again (a new one is made when needed).
        if let Some(decoder) = decoder {
            // The permit went with the blocking task, so another may have made a decoder meanwhile.
            let mut idle = self.idle.lock();
            if idle.len() < self.workers {
                idle.push(decoder);
            }
        }
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
