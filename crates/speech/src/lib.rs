//! Speech processing for transcription jobs: audio bytes in, utterances with speakers and word times out,
//! rendered in the formats a client asks for. It knows nothing of HTTP, storage or the bus, so the job that
//! transcribes an upload, the benchmark and the tests all call the same functions (docs/transcription.md).
//!
//! - [`audio`] decodes an upload (WAV, MP3, FLAC, Ogg Vorbis) to 16 kHz 16-bit channels;
//! - [`engine`] is the recognizer port, [`sphinx`] and [`http_engine`] its adapters;
//! - [`assemble`] recognizes each channel, names the speakers and builds the transcript JSON;
//! - [`output`] renders a transcript as JSON, text, SRT or WebVTT;
//! - [`wer`] scores a hypothesis against a reference (word error rate).

pub mod assemble;
pub mod audio;
pub mod engine;
mod error;
pub mod http_engine;
pub mod output;
pub mod sphinx;
pub mod wer;

#[cfg(feature = "testing")]
pub mod testing;

use std::path::PathBuf;
use std::sync::Arc;

use common::config::{require_http_url, ConfigError};
use serde::{Deserialize, Serialize};

pub use engine::{Segment, Transcriber, Word};
pub use error::SpeechError;

/// Which recognizer transcribes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AsrEngine {
    /// PocketSphinx in this process ([`sphinx::SphinxEngine`]).
    Pocketsphinx,
    /// An external engine over HTTP ([`http_engine::HttpEngine`], contract in docs/transcription.md).
    Http,
}

/// The speech settings of the service, as the service's configuration gives them
/// (`AnalyticsConfig::speech`; environment `SPEECH_ASR_*` and `SPEECH_MAX_AUDIO_SECONDS`).
#[derive(Debug, Clone)]
pub struct SpeechConfig {
    /// `pocketsphinx` or `http`.
    pub asr_engine: AsrEngine,
    /// The external engine's URL, required with `asr_engine = "http"`.
    pub asr_url: Option<String>,
    /// The PocketSphinx model directory: `en-us/` (acoustic model), `en-us.lm.bin`,
    /// `cmudict-en-us.dict`, as the Debian package `pocketsphinx-en-us` lays them out.
    pub asr_model_dir: PathBuf,
    /// At most this many recognitions run at once (and PocketSphinx decoders are kept, each holding its
    /// models in memory, about 40 MB for US English). A stereo call takes two.
    pub asr_workers: usize,
    /// Longer audio is refused before it is recognized.
    pub max_audio_seconds: f64,
}

impl SpeechConfig {
    /// Checks the settings; the message names the offending key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.asr_workers == 0 {
            return Err(ConfigError("asr_workers must be at least 1".into()));
        }
        if !(1.0..=86_400.0).contains(&self.max_audio_seconds) {
            return Err(ConfigError(format!(
                "max_audio_seconds must be 1 to 86400 seconds, got {}",
                self.max_audio_seconds
            )));
        }
        match (self.asr_engine, &self.asr_url) {
            (AsrEngine::Http, None) => Err(ConfigError(
                "asr_url is required when asr_engine is \"http\"".into(),
            )),
            (AsrEngine::Http, Some(url)) => require_http_url("asr_url", url),
            (AsrEngine::Pocketsphinx, _) => Ok(()),
        }
    }
}

impl Default for SpeechConfig {
    fn default() -> Self {
        SpeechConfig {
            asr_engine: AsrEngine::Pocketsphinx,
            asr_url: None,
            asr_model_dir: PathBuf::from(pocketsphinx::DEBIAN_MODEL_DIR),
            asr_workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_audio_seconds: audio::DEFAULT_MAX_SECONDS,
        }
    }
}

/// The configured recognizer. PocketSphinx loads its models on first use, so a wrong model directory
/// shows in the first job's error, not here.
pub fn build(config: &SpeechConfig) -> Result<Arc<dyn Transcriber>, SpeechError> {
    config
        .validate()
        .map_err(|e| SpeechError::Engine(e.to_string()))?;
    Ok(match config.asr_engine {
        AsrEngine::Pocketsphinx => Arc::new(sphinx::SphinxEngine::new(
            pocketsphinx::Config::from_model_dir(&config.asr_model_dir),
            config.asr_workers,
        )),
        AsrEngine::Http => Arc::new(http_engine::HttpEngine::new(
            config.asr_url.clone().unwrap_or_default(),
        )?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_key() {
        assert!(SpeechConfig::default().validate().is_ok());
        let http = SpeechConfig {
            asr_engine: AsrEngine::Http,
            ..SpeechConfig::default()
        };
        assert!(http.validate().unwrap_err().0.contains("asr_url"));
        let http = SpeechConfig {
            asr_url: Some("ftp://x".into()),
            ..http
        };
        assert!(http.validate().unwrap_err().0.contains("asr_url"));
        let workers = SpeechConfig {
            asr_workers: 0,
            ..SpeechConfig::default()
        };
        assert!(workers.validate().unwrap_err().0.contains("asr_workers"));
        let engine: AsrEngine = serde_json::from_str("\"http\"").unwrap();
        assert_eq!(engine, AsrEngine::Http);
    }
}
