//! The speaker turns of a stored transcript, as scoring and the figures read them: the `utterances` of
//! the transcript JSON (checked when the call was added), each with its words when the transcript has
//! them.

use serde::Deserialize;
use serde_json::{Map, Value};

pub use phrases::Speaker;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Word {
    pub word: String,
    pub start: f64,
    pub end: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Utterance {
    #[serde(deserialize_with = "speaker")]
    pub speaker: Speaker,
    pub start: f64,
    pub end: f64,
    pub text: String,
    #[serde(default)]
    pub words: Option<Vec<Word>>,
}

fn speaker<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Speaker, D::Error> {
    match String::deserialize(d)?.as_str() {
        "agent" => Ok(Speaker::Agent),
        "client" => Ok(Speaker::Client),
        other => Err(serde::de::Error::custom(format!(
            "speaker must be agent or client, not {other}"
        ))),
    }
}

/// The utterances of a stored transcript, in the order given.
pub fn utterances(json: &Map<String, Value>) -> Result<Vec<Utterance>, serde_json::Error> {
    match json.get("utterances") {
        Some(value) => Vec::<Utterance>::deserialize(value),
        None => Ok(Vec::new()),
    }
}

/// The utterances as turns for the phrase matcher (each word with its own times when it has them).
pub fn turns(utterances: &[Utterance]) -> Vec<phrases::Turn> {
    utterances
        .iter()
        .map(|u| phrases::Turn {
            speaker: u.speaker,
            start: u.start,
            end: u.end,
            text: u.text.clone(),
            words: u.words.as_ref().filter(|w| !w.is_empty()).map(|words| {
                words
                    .iter()
                    .map(|w| phrases::TimedWord {
                        text: w.word.clone(),
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
        let json: Map<String, Value> = serde_json::from_str(
            r#"{"utterances": [
                {"speaker": "agent", "channel": 0, "start": 0.5, "end": 2.0, "confidence": 0.9,
                 "text": "thank you", "words": [{"word": "thank", "start": 0.5, "end": 0.9, "confidence": 0.8},
                                                 {"word": "you", "start": 1.0, "end": 2.0}]},
                {"speaker": "client", "start": 2.5, "end": 4.0, "text": "hello there"}]}"#,
        )
        .unwrap();
        let utterances = utterances(&json).unwrap();
        let turns = turns(&utterances);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].speaker, Speaker::Agent);
        assert_eq!(turns[0].words.as_ref().unwrap()[1].start, 1.0);
        assert_eq!(turns[1].speaker, Speaker::Client);
        assert!(turns[1].words.is_none());
        assert!(utterances_of(
            r#"{"utterances": [{"speaker": "bot", "start": 0, "end": 1, "text": "x"}]}"#
        )
        .is_err());
        assert!(utterances_of("{}").unwrap().is_empty());
    }

    fn utterances_of(text: &str) -> Result<Vec<Utterance>, serde_json::Error> {
        utterances(&serde_json::from_str(text).unwrap())
    }
}
