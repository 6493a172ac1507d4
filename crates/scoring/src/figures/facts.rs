//! The figures of one call from its stored transcript (docs/figures.md): the scoring worker computes
//! them once per call and the daily rollups sum them, so `/stats` never reads transcripts.

use super::sentiment::emotion;
use crate::model::utterances::{Speaker, StoredCall, Utterance};
use crate::model::CallFacts;

/// The figures of a stored transcript (its `datetime`, local time YYYY-MM-DDTHH:MM:SS, its `agent_id`
/// and `audio_seconds`) and of its utterances.
pub fn facts(call: &StoredCall) -> CallFacts {
    let utterances = &call.utterances[..];
    let datetime = call.datetime.clone();
    let duration = call
        .audio_seconds
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0);
    let talk = |speaker: Speaker| -> f64 {
        utterances
            .iter()
            .filter(|u| u.speaker == speaker)
            .map(|u| (u.end - u.start).max(0.0))
            .sum()
    };
    CallFacts {
        day: datetime.get(..10).unwrap_or_default().to_string(),
        agent_id: call.agent_id.clone(),
        datetime,
        duration,
        silence: (duration - spoken(utterances, duration)).max(0.0),
        words: utterances
            .iter()
            .map(|u| u.text.split_whitespace().count() as i64)
            .sum(),
        agent_talk: talk(Speaker::Agent),
        client_talk: talk(Speaker::Client),
        agent_emotion: emotion(utterances, Speaker::Agent),
        client_emotion: emotion(utterances, Speaker::Client),
    }
}

/// The time within [0, duration] covered by speech: the union of the words' intervals, an utterance
/// without words counting as one interval.
fn spoken(utterances: &[Utterance], duration: f64) -> f64 {
    let mut spans: Vec<(f64, f64)> = utterances
        .iter()
        .flat_map(|u| match u.words.as_deref() {
            Some(words) if !words.is_empty() => {
                words.iter().map(|w| (w.start, w.end)).collect::<Vec<_>>()
            }
            _ => vec![(u.start, u.end)],
        })
        .map(|(s, e)| (s.max(0.0), e.min(duration)))
        .filter(|(s, e)| e > s)
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut covered = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (s, e) in spans {
        match current {
            Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                covered += ce - cs;
                current = Some((s, e));
            }
            None => current = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = current {
        covered += ce - cs;
    }
    covered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Emotion;

    fn call(text: &str) -> CallFacts {
        facts(&StoredCall::read(text.as_bytes()).unwrap())
    }

    #[test]
    fn the_figures_of_a_call_with_words() {
        let facts = call(
            r#"{"datetime": "2026-11-20T10:15:00", "agent_id": "a7", "audio_seconds": 60,
                "utterances": [
                  {"speaker": "agent", "start": 1, "end": 6, "text": "thank you, that is great",
                   "words": [{"word": "thank", "start": 1, "end": 2}, {"word": "you", "start": 2, "end": 3},
                             {"word": "that", "start": 4, "end": 4.5}, {"word": "is", "start": 4.5, "end": 5},
                             {"word": "great", "start": 5, "end": 6}]},
                  {"speaker": "client", "start": 5.5, "end": 20, "text": "this is terrible, I am very angry",
                   "words": [{"word": "this", "start": 5.5, "end": 7}, {"word": "terrible", "start": 18, "end": 20}]},
                  {"speaker": "client", "start": 58, "end": 65, "text": "bye"}]}"#,
        );
        assert_eq!(facts.day, "2026-11-20");
        assert_eq!(facts.datetime, "2026-11-20T10:15:00");
        assert_eq!(facts.agent_id, "a7");
        assert_eq!(facts.duration, 60.0);
        // Covered: [1, 3] + [4, 7] (words 4-6 and 5.5-7 overlap) + [18, 20] + [58, 60] (the wordless
        // utterance, cut at the end of the audio) = 2 + 3 + 2 + 2 = 9; silence 60 - 9 = 51.
        assert_eq!(facts.silence, 51.0);
        // 5 + 7 + 1 words.
        assert_eq!(facts.words, 13);
        assert_eq!(facts.agent_talk, 5.0);
        // (20 - 5.5) + (65 - 58) = 21.5
        assert_eq!(facts.client_talk, 21.5);
        // Middle of the turns: (1 + 65) / 2 = 33. Agent: one turn, 0.765: positive. Client: -0.7713 in
        // the first half, 0 ("bye") in the second: a change of 0.7713, improving.
        assert_eq!(facts.agent_emotion, Some(Emotion::Positive));
        assert_eq!(facts.client_emotion, Some(Emotion::Improving));
    }

    #[test]
    fn silence_never_falls_below_zero_and_empty_calls_have_no_emotion() {
        let facts = call(
            r#"{"datetime": "2026-11-20T10:15:00", "agent_id": "a7", "audio_seconds": 4,
                "utterances": [{"speaker": "agent", "start": 0, "end": 3, "text": "hello"},
                               {"speaker": "agent", "start": 2, "end": 9, "text": "bye"}]}"#,
        );
        assert_eq!(facts.silence, 0.0);
        assert_eq!(facts.agent_talk, 10.0);
        assert_eq!(facts.agent_emotion, None);
        let empty = call(r#"{"datetime": "2026-11-21T00:00:01", "audio_seconds": 30}"#);
        assert_eq!(empty.silence, 30.0);
        assert_eq!(empty.words, 0);
        assert_eq!(empty.agent_id, "");
        assert_eq!((empty.agent_emotion, empty.client_emotion), (None, None));
    }
}
