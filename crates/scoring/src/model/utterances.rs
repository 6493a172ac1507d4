//! The speaker turns of a stored transcript, as scoring and the figures read them: the `utterances` of
//! the transcript JSON (checked when the call was added), each with its words when the transcript has
//! them, and the fields the service stamped on it. Read straight into these types from the stored bytes,
//! each text borrowed from them where it has no escapes: a tree of a 5-minute call's 55 KB, built and
//! freed, cost more than scoring it, and a string allocated for each of its 750 words a third of the
//! reading.

use std::borrow::Cow;

use serde::Deserialize;

pub use phrases::Speaker;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Word<'a> {
    #[serde(borrow)]
    pub word: Cow<'a, str>,
    pub start: f64,
    pub end: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Utterance<'a> {
    #[serde(deserialize_with = "speaker")]
    pub speaker: Speaker,
    pub start: f64,
    pub end: f64,
    #[serde(borrow)]
    pub text: Cow<'a, str>,
    #[serde(default, borrow)]
    pub words: Option<Vec<Word<'a>>>,
}

fn speaker<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Speaker, D::Error> {
    /// The names a speaker may have, read without allocating.
    #[derive(Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Name {
        Agent,
        Client,
    }
    Ok(match Name::deserialize(d)? {
        Name::Agent => Speaker::Agent,
        Name::Client => Speaker::Client,
    })
}

/// What scoring and the figures read of a stored transcript: its stamped `datetime` (local time),
/// `agent_id` and `audio_seconds`, and its utterances in the order given.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct StoredCall<'a> {
    #[serde(default)]
    pub datetime: String,
    #[serde(default)]
    pub agent_id: String,
    #[serde(default)]
    pub audio_seconds: Option<f64>,
    #[serde(default, borrow)]
    pub utterances: Vec<Utterance<'a>>,
}

impl<'a> StoredCall<'a> {
    /// Reads the stored transcript `bytes`, checked as UTF-8 once: read as bytes, serde_json checks each
    /// string it keeps on its own, which took half as long again as the whole reading.
    pub fn read(bytes: &'a [u8]) -> Result<StoredCall<'a>, serde_json::Error> {
        let text = std::str::from_utf8(bytes).map_err(serde::de::Error::custom)?;
        serde_json::from_str(text)
    }
}

/// The utterances as turns for the phrase matcher (each word with its own times when it has them).
pub fn turns(utterances: Vec<Utterance<'_>>) -> Vec<phrases::Turn> {
    utterances
        .into_iter()
        .map(|u| phrases::Turn {
            speaker: u.speaker,
            start: u.start,
            end: u.end,
            text: u.text.into_owned(),
            words: u.words.filter(|w| !w.is_empty()).map(|words| {
                words
                    .into_iter()
                    .map(|w| phrases::TimedWord {
                        text: w.word.into_owned(),
                        start: w.start,
                        end: w.end,
                    })
                    .collect()
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_turns_with_and_without_words() {
        let call = StoredCall::read(
            br#"{"utterances": [
                {"speaker": "agent", "channel": 0, "start": 0.5, "end": 2.0, "confidence": 0.9,
                 "text": "thank you", "words": [{"word": "thank", "start": 0.5, "end": 0.9, "confidence": 0.8},
                                                 {"word": "you", "start": 1.0, "end": 2.0}]},
                {"speaker": "client", "start": 2.5, "end": 4.0, "text": "hello there"}]}"#,
        )
        .unwrap();
        let turns = turns(call.utterances);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].speaker, Speaker::Agent);
        assert_eq!(turns[0].words.as_ref().unwrap()[1].start, 1.0);
        assert_eq!(turns[1].speaker, Speaker::Client);
        assert!(turns[1].words.is_none());
        assert!(StoredCall::read(
            br#"{"utterances": [{"speaker": "bot", "start": 0, "end": 1, "text": "x"}]}"#
        )
        .is_err());
        assert_eq!(StoredCall::read(b"{}").unwrap(), StoredCall::default());
    }
}
