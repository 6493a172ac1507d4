//! The formats a transcript is delivered in: the transcript JSON itself, plain text for reading, and
//! SRT or WebVTT subtitles for players. All are rendered from the transcript JSON (not from the
//! recognizer's structures), so a stored transcript, uploaded or transcribed, renders the same way.
//! The shapes are documented in docs/transcription.md ("Output formats").

use std::fmt::Write as _;
use std::str::FromStr;

use serde_json::{Map, Value};

/// A delivery format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Json,
    Text,
    Srt,
    Vtt,
}

/// The names [`Output::from_str`] accepts, for error messages.
pub const ACCEPTED: &str = "json, text (or txt), srt, vtt (or webvtt)";

/// An unknown format name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown output format {0:?}; accepted: {ACCEPTED}")]
pub struct UnknownFormat(pub String);

impl FromStr for Output {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Output, UnknownFormat> {
        match name.trim().to_ascii_lowercase().as_str() {
            "json" => Ok(Output::Json),
            "text" | "txt" => Ok(Output::Text),
            "srt" => Ok(Output::Srt),
            "vtt" | "webvtt" => Ok(Output::Vtt),
            _ => Err(UnknownFormat(name.to_owned())),
        }
    }
}

impl Output {
    pub fn content_type(&self) -> &'static str {
        match self {
            Output::Json => "application/json",
            Output::Text => "text/plain; charset=utf-8",
            Output::Srt => "application/x-subrip; charset=utf-8",
            Output::Vtt => "text/vtt; charset=utf-8",
        }
    }

    /// The name a request keeps its format under, which `from_str` reads back.
    pub fn name(&self) -> &'static str {
        match self {
            Output::Json => "json",
            Output::Text => "text",
            Output::Srt => "srt",
            Output::Vtt => "vtt",
        }
    }

    /// The file name extension, without the dot.
    pub fn extension(&self) -> &'static str {
        match self {
            Output::Json => "json",
            Output::Text => "txt",
            Output::Srt => "srt",
            Output::Vtt => "vtt",
        }
    }

    /// Renders a transcript JSON. Missing or mistyped fields of an utterance render as empty text and
    /// zero times rather than failing: the transcript was validated when it was stored.
    pub fn render(&self, transcript: &Map<String, Value>) -> Vec<u8> {
        if let Output::Json = self {
            return serde_json::to_vec(transcript).unwrap_or_default();
        }
        let cues = cues(transcript);
        let mut out = String::new();
        match self {
            Output::Json => {}
            Output::Text => {
                for cue in &cues {
                    let _ = writeln!(out, "{}: {}", cue.speaker, cue.text);
                }
            }
            Output::Srt => {
                for (i, cue) in cues.iter().enumerate() {
                    let _ = write!(
                        out,
                        "{}\n{} --> {}\n{}: {}\n\n",
                        i + 1,
                        timestamp(cue.start, ','),
                        timestamp(cue.end, ','),
                        cue.speaker,
                        cue.text
                    );
                }
            }
            Output::Vtt => {
                out.push_str("WEBVTT\n\n");
                for (i, cue) in cues.iter().enumerate() {
                    let _ = write!(
                        out,
                        "{}\n{} --> {}\n<v {}>{}</v>\n\n",
                        i + 1,
                        timestamp(cue.start, '.'),
                        timestamp(cue.end, '.'),
                        escape_vtt(&cue.speaker),
                        escape_vtt(&cue.text)
                    );
                }
            }
        }
        out.into_bytes()
    }
}

/// One utterance as the text formats show it.
struct Cue {
    speaker: String,
    start: f64,
    end: f64,
    text: String,
}

fn cues(transcript: &Map<String, Value>) -> Vec<Cue> {
    let Some(Value::Array(utterances)) = transcript.get("utterances") else {
        return Vec::new();
    };
    utterances
        .iter()
        .map(|u| {
            let start = u
                .get("start")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .max(0.0);
            Cue {
                speaker: one_line(u.get("speaker").and_then(Value::as_str).unwrap_or("")),
                start,
                end: u
                    .get("end")
                    .and_then(Value::as_f64)
                    .unwrap_or(start)
                    .max(start),
                text: one_line(u.get("text").and_then(Value::as_str).unwrap_or("")),
            }
        })
        .collect()
}

/// The text on one line: a line break inside a cue's text would end the cue (SRT, WebVTT) or start
/// another utterance's line (text).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `HH:MM:SS,mmm` (SRT, `separator` `,`) or `HH:MM:SS.mmm` (WebVTT, `.`).
fn timestamp(seconds: f64, separator: char) -> String {
    let ms = (seconds * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// WebVTT cue text is markup: `&`, `<` and `>` are escaped.
fn escape_vtt(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transcript() -> Map<String, Value> {
        let Value::Object(map) = json!({
            "filename": "call-0001.wav", "audio_seconds": 3725.5,
            "utterances": [
                {"speaker": "agent", "channel": 0, "start": 0.52, "end": 3.2, "confidence": 0.91,
                 "text": "thank you for calling", "words": []},
                {"speaker": "client", "channel": 1, "start": 3661.005, "end": 3662.5,
                 "text": "my invoice\nis <wrong> & late"}
            ]
        }) else {
            unreachable!()
        };
        map
    }

    #[test]
    fn names() {
        assert_eq!("JSON".parse(), Ok(Output::Json));
        assert_eq!("text".parse(), Ok(Output::Text));
        assert_eq!("Txt".parse(), Ok(Output::Text));
        assert_eq!("srt".parse(), Ok(Output::Srt));
        assert_eq!("vtt".parse(), Ok(Output::Vtt));
        for output in [Output::Json, Output::Text, Output::Srt, Output::Vtt] {
            assert_eq!(
                output.name().parse(),
                Ok(output),
                "a stored name reads back"
            );
        }
        assert_eq!("WebVTT".parse(), Ok(Output::Vtt));
        let error = "docx".parse::<Output>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown output format \"docx\"; accepted: json, text (or txt), srt, vtt (or webvtt)"
        );
        assert_eq!(Output::Srt.extension(), "srt");
        assert_eq!(Output::Vtt.content_type(), "text/vtt; charset=utf-8");
    }

    #[test]
    fn text() {
        let text = String::from_utf8(Output::Text.render(&transcript())).unwrap();
        assert_eq!(
            text,
            "agent: thank you for calling\nclient: my invoice is <wrong> & late\n"
        );
    }

    #[test]
    fn srt() {
        let srt = String::from_utf8(Output::Srt.render(&transcript())).unwrap();
        assert_eq!(
            srt,
            "1\n00:00:00,520 --> 00:00:03,200\nagent: thank you for calling\n\n\
             2\n01:01:01,005 --> 01:01:02,500\nclient: my invoice is <wrong> & late\n\n"
        );
    }

    #[test]
    fn vtt() {
        let vtt = String::from_utf8(Output::Vtt.render(&transcript())).unwrap();
        assert_eq!(
            vtt,
            "WEBVTT\n\n\
             1\n00:00:00.520 --> 00:00:03.200\n<v agent>thank you for calling</v>\n\n\
             2\n01:01:01.005 --> 01:01:02.500\n<v client>my invoice is &lt;wrong&gt; &amp; late</v>\n\n"
        );
    }

    #[test]
    fn json_is_the_transcript() {
        let bytes = Output::Json.render(&transcript());
        let back: Map<String, Value> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, transcript());
        // No utterances: empty documents of each kind.
        let empty = Map::new();
        assert_eq!(Output::Text.render(&empty), b"");
        assert_eq!(Output::Srt.render(&empty), b"");
        assert_eq!(Output::Vtt.render(&empty), b"WEBVTT\n\n");
    }
}
