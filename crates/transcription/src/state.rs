//! What transcription adds to the analytics service's state: the recognizer its workers run and the
//! guarded, signing client of its callbacks. Everything else (the database, the ports, the token
//! checks) is the core's, reached through `Deref`.

use std::ops::Deref;
use std::sync::Arc;

use analytics_core::AnalyticsState;
use callbacks::Deliverer;
use speech::Transcriber;

pub struct TranscriptionState {
    pub core: Arc<AnalyticsState>,
    /// The recognizer the transcription workers use (PocketSphinx loads its models on first use, so a
    /// process that runs no transcription worker never does).
    pub transcriber: Arc<dyn Transcriber>,
    /// The guarded, signing HTTP client of result callbacks.
    pub callbacks: Deliverer,
}

impl TranscriptionState {
    /// Transcription on `core`, with the recognizer and callbacks its configuration names; fails when
    /// the recognizer cannot be built from the settings (an engine address that does not parse, say).
    pub fn new(core: Arc<AnalyticsState>) -> Result<TranscriptionState, speech::SpeechError> {
        let config = &core.config;
        Ok(TranscriptionState {
            transcriber: speech::build(&config.speech())?,
            callbacks: Deliverer::new(&config.callback_settings(), config.common.secret().ok()),
            core,
        })
    }
}

impl Deref for TranscriptionState {
    type Target = AnalyticsState;

    fn deref(&self) -> &AnalyticsState {
        &self.core
    }
}
