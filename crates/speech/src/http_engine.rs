//! The adapter for a recognizer that runs as its own service, reached over HTTP: for engines that do not
//! belong in this process (a GPU model, a commercial engine behind a small bridge). The contract, in
//! docs/transcription.md ("Recognizer"): `POST` of the audio as a 16 kHz mono 16-bit WAV file
//! (`Content-Type: audio/wav`) to the configured URL, answered with `200` and
//! `{"segments": [{"words": [{"word", "start", "end", "confidence"}]}]}`, times in seconds from the
//! start of the file.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;

use super::audio::{wav_bytes, SAMPLE_RATE};
use super::engine::{Segment, Transcriber};
use crate::error::SpeechError;

/// The answer of the external engine.
#[derive(Debug, Deserialize)]
struct Answer {
    segments: Vec<Segment>,
}

pub struct HttpEngine {
    client: reqwest::Client,
    url: String,
}

impl HttpEngine {
    pub fn new(url: String) -> Result<HttpEngine, SpeechError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| SpeechError::Engine(format!("HTTP client: {e}")))?;
        Ok(HttpEngine { client, url })
    }

    /// How long a recognition may take: a minute, plus twice the audio's length (a recognizer slower
    /// than half real time is taken for stuck).
    fn timeout(samples: usize) -> Duration {
        Duration::from_secs(60)
            + Duration::from_secs_f64(2.0 * samples as f64 / f64::from(SAMPLE_RATE))
    }
}

#[async_trait]
impl Transcriber for HttpEngine {
    async fn recognize(&self, samples: Arc<[i16]>) -> Result<Vec<Segment>, SpeechError> {
        if samples.is_empty() {
            return Ok(Vec::new());
        }
        let failed = |what: String| SpeechError::Engine(format!("{}: {what}", self.url));
        let response = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "audio/wav")
            .timeout(Self::timeout(samples.len()))
            .body(wav_bytes(&samples))
            .send()
            .await
            .map_err(|e| failed(format!("request failed: {e}")))?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| failed(format!("reading the answer failed: {e}")))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
            return Err(failed(format!("answered {status}: {text}")));
        }
        let answer: Answer = serde_json::from_slice(&body)
            .map_err(|e| failed(format!("the answer is not the expected JSON: {e}")))?;
        let mut segments = Vec::with_capacity(answer.segments.len());
        for segment in answer.segments {
            for word in &segment.words {
                let valid = word.start.is_finite()
                    && word.end.is_finite()
                    && 0.0 <= word.start
                    && word.start <= word.end
                    && (0.0..=1.0).contains(&word.confidence);
                if !valid {
                    return Err(failed(format!(
                        "a word with impossible times or confidence: {word:?}"
                    )));
                }
            }
            if !segment.words.is_empty() {
                segments.push(segment);
            }
        }
        Ok(segments)
    }

    fn name(&self) -> &str {
        "http"
    }
}
