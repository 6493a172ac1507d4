//! The one error of speech processing, shared by the decoder and the recognizers.

/// Why speech processing failed. The messages are meant for the user who uploaded the audio, except
/// for [`SpeechError::Engine`], which is the operator's concern.
#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    /// The upload is not audio in a format this service decodes.
    #[error("{0}")]
    Unsupported(String),
    /// Audio that decodes but is refused: too many channels, too long, empty.
    #[error("{0}")]
    Rejected(String),
    /// Audio whose data is damaged beyond decoding.
    #[error("{0}")]
    Corrupt(String),
    /// The recognizer failed (models missing, the external engine unreachable or answering nonsense).
    #[error("speech recognizer: {0}")]
    Engine(String),
}
