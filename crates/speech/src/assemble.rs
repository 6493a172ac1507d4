//! From decoded audio to the utterances of a transcript: who spoke, when, and what. A contact-centre
//! call is either stereo with one party per channel, or mono with both parties mixed; the speaker is
//! then the channel's (the caller says which channel is the agent's) or, for mono with diarization, the
//! label a diarizer gives each utterance. The result is the transcript JSON of docs/analytics-api.md
//! ("Adding calls"), so a transcribed call is stored like an uploaded transcript.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::audio::{Audio, SAMPLE_RATE};
use super::engine::{Segment, Transcriber, Word};
use crate::error::SpeechError;

/// The two parties of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    Agent,
    Client,
}

impl Speaker {
    pub fn as_str(self) -> &'static str {
        match self {
            Speaker::Agent => "agent",
            Speaker::Client => "client",
        }
    }

    /// The speaker of channel (or diarization label) `channel` when `agent_channel` is the agent's.
    pub fn of_channel(channel: u32, agent_channel: u32) -> Speaker {
        if channel == agent_channel {
            Speaker::Agent
        } else {
            Speaker::Client
        }
    }
}

/// How a call is to be transcribed; by default channel 0 is the agent's and nothing is diarized.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// The agent's channel, 0 (left) or 1 (right). In mono audio, 0 makes the one speaker (without
    /// diarization) or the first diarized speaker the agent; 1 the client.
    pub agent_channel: u32,
    /// Split mono audio into two speakers. Ignored for stereo, whose channels are the speakers.
    pub diarize: bool,
}

/// One utterance of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Utterance {
    pub speaker: Speaker,
    pub channel: u32,
    /// Its first word's start and its last word's end, in seconds from the start of the call.
    pub start: f64,
    pub end: f64,
    /// The mean of its words' confidences.
    pub confidence: f64,
    /// Its words separated by spaces.
    pub text: String,
    pub words: Vec<Word>,
}

/// Recognizes `audio` with `engine` and returns its utterances in time order (by start, then
/// channel). Stereo channels are recognized at the same time.
pub async fn transcribe(
    engine: &dyn Transcriber,
    audio: &Audio,
    opts: &Options,
) -> Result<Vec<Utterance>, SpeechError> {
    if opts.agent_channel > 1 {
        return Err(SpeechError::Rejected(format!(
            "the agent's channel is 0 or 1, not {}",
            opts.agent_channel
        )));
    }
    let mut utterances = Vec::new();
    match audio.channels.as_slice() {
        [mono] => {
            let segments = engine.recognize(Arc::from(mono.as_slice())).await?;
            if !opts.diarize {
                let speaker = Speaker::of_channel(0, opts.agent_channel);
                utterances.extend(
                    segments
                        .into_iter()
                        .filter_map(|s| utterance(s, 0, speaker)),
                );
            } else {
                // Feature extraction, change detection and clustering are CPU work: off the async
                // workers.
                let samples = mono.clone();
                let (segments, turns) = tokio::task::spawn_blocking(move || {
                    let turns = speaker_turns(&samples, &segments);
                    (segments, turns)
                })
                .await
                .map_err(|e| SpeechError::Engine(format!("diarization stopped: {e}")))?;
                if turns.len() != segments.len() {
                    return Err(SpeechError::Engine(format!(
                        "diarization labelled {} of {} utterances",
                        turns.len(),
                        segments.len()
                    )));
                }
                for (segment, turns) in segments.into_iter().zip(turns) {
                    for (words, label) in split_at_turns(segment.words, &turns) {
                        let speaker =
                            Speaker::of_channel(u32::from(label.min(1)), opts.agent_channel);
                        utterances.extend(utterance(Segment { words }, 0, speaker));
                    }
                }
            }
        }
        [left, right] => {
            let (left, right) = futures_util::future::try_join(
                engine.recognize(Arc::from(left.as_slice())),
                engine.recognize(Arc::from(right.as_slice())),
            )
            .await?;
            for (channel, segments) in [(0u32, left), (1u32, right)] {
                let speaker = Speaker::of_channel(channel, opts.agent_channel);
                for segment in segments {
                    utterances.extend(utterance(segment, channel, speaker));
                }
            }
        }
        channels => {
            return Err(SpeechError::Rejected(format!(
                "the audio has {} channels; mono or stereo is accepted",
                channels.len()
            )))
        }
    }
    utterances.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.channel.cmp(&b.channel)));
    Ok(utterances)
}

fn utterance(segment: Segment, channel: u32, speaker: Speaker) -> Option<Utterance> {
    if segment.words.is_empty() {
        return None;
    }
    let confidence =
        segment.words.iter().map(|w| w.confidence).sum::<f64>() / segment.words.len() as f64;
    let text = segment
        .words
        .iter()
        .map(|w| w.word.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    Some(Utterance {
        speaker,
        channel,
        start: segment.start(),
        end: segment.end(),
        confidence,
        text,
        words: segment.words,
    })
}

/// The speaker turns of each recognizer segment of mono 16 kHz audio, as the start and the label of
/// each, 0 or 1: a segment may hold both speakers when one took over without a pause, and the change is
/// looked for between its words. Label 0 is the speaker of the first turn (docs/transcription.md,
/// Diarization).
pub fn speaker_turns(samples: &[i16], segments: &[Segment]) -> Vec<Vec<(f64, u8)>> {
    // Between two words: halfway through the pause between them, if any.
    let cuts: Vec<Vec<f64>> = segments
        .iter()
        .map(|s| {
            s.words
                .windows(2)
                .map(|pair| (pair[0].end + pair[1].start) / 2.0)
                .collect()
        })
        .collect();
    let spans: Vec<diarize::Span<'_>> = segments
        .iter()
        .zip(&cuts)
        .map(|(s, cuts)| diarize::Span {
            start: s.start(),
            end: s.end(),
            cuts,
        })
        .collect();
    diarize::diarize_spans(samples, SAMPLE_RATE, &spans)
}

/// The words of a segment grouped by its speaker turns (start and label, as [`speaker_turns`] gives
/// them): each word goes to the last turn that starts by the word's own start.
fn split_at_turns(words: Vec<Word>, turns: &[(f64, u8)]) -> Vec<(Vec<Word>, u8)> {
    let mut groups: Vec<(Vec<Word>, u8)> = Vec::new();
    let mut turn = 0;
    for word in words {
        while turns
            .get(turn + 1)
            .is_some_and(|&(start, _)| start <= word.start)
        {
            turn += 1;
        }
        let label = turns.get(turn).map_or(0, |&(_, label)| label);
        match groups.last_mut() {
            Some((group, last)) if *last == label => group.push(word),
            _ => groups.push((vec![word], label)),
        }
    }
    groups
}

/// Rounds seconds to hundredths, as the transcript JSON gives times.
fn time(seconds: f64) -> f64 {
    (seconds * 100.0).round() / 100.0
}

/// Rounds a confidence to thousandths.
fn confidence(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// The transcript JSON of a transcribed call (docs/analytics-api.md, "Adding calls"): `filename`,
/// `audio_seconds` and the `utterances`, each with `speaker`, `channel`, `start`, `end`, `confidence`,
/// `text` and `words`. Times are rounded to hundredths of a second, confidences to thousandths.
pub fn transcript_json(
    utterances: &[Utterance],
    audio_seconds: f64,
    filename: &str,
) -> Map<String, Value> {
    let utterances: Vec<Value> = utterances
        .iter()
        .map(|u| {
            let words: Vec<Value> = u
                .words
                .iter()
                .map(|w| {
                    json!({"word": w.word, "start": time(w.start), "end": time(w.end),
                           "confidence": confidence(w.confidence)})
                })
                .collect();
            json!({"speaker": u.speaker.as_str(), "channel": u.channel, "start": time(u.start),
                   "end": time(u.end), "confidence": confidence(u.confidence), "text": u.text,
                   "words": words})
        })
        .collect();
    let mut transcript = Map::new();
    transcript.insert("filename".into(), filename.into());
    transcript.insert("audio_seconds".into(), time(audio_seconds).into());
    transcript.insert("utterances".into(), utterances.into());
    transcript
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;

    /// A recognizer that hears one word per second of non-silent audio: enough to check how channels
    /// become speakers without a model.
    struct Counting;

    #[async_trait]
    impl Transcriber for Counting {
        async fn recognize(&self, samples: Arc<[i16]>) -> Result<Vec<Segment>, SpeechError> {
            Ok(samples
                .chunks(SAMPLE_RATE as usize)
                .enumerate()
                .filter(|(_, second)| second.iter().any(|s| *s != 0))
                .map(|(i, _)| Segment {
                    words: vec![Word {
                        word: format!("w{i}"),
                        start: i as f64 + 0.25,
                        end: i as f64 + 0.75,
                        confidence: 0.5,
                    }],
                })
                .collect())
        }

        fn name(&self) -> &str {
            "counting"
        }
    }

    fn second(loud: bool) -> Vec<i16> {
        vec![if loud { 1000 } else { 0 }; SAMPLE_RATE as usize]
    }

    #[tokio::test]
    async fn stereo_channels_are_speakers_merged_by_time() {
        let left = [second(true), second(false), second(true)].concat();
        let right = [second(false), second(true), second(false)].concat();
        let audio = Audio {
            channels: vec![left, right],
            seconds: 3.0,
        };
        for (agent_channel, expected) in [
            (0, [Speaker::Agent, Speaker::Client, Speaker::Agent]),
            (1, [Speaker::Client, Speaker::Agent, Speaker::Client]),
        ] {
            let opts = Options {
                agent_channel,
                diarize: false,
            };
            let utterances = transcribe(&Counting, &audio, &opts).await.unwrap();
            let speakers: Vec<Speaker> = utterances.iter().map(|u| u.speaker).collect();
            assert_eq!(speakers, expected);
            let channels: Vec<u32> = utterances.iter().map(|u| u.channel).collect();
            assert_eq!(channels, [0, 1, 0]);
            assert_eq!(utterances[1].text, "w1");
        }
    }

    #[tokio::test]
    async fn mono_is_one_speaker_named_by_the_agent_channel() {
        let audio = Audio {
            channels: vec![[second(true), second(true)].concat()],
            seconds: 2.0,
        };
        for diarize in [false, true] {
            let agent = transcribe(
                &Counting,
                &audio,
                &Options {
                    agent_channel: 0,
                    diarize,
                },
            )
            .await
            .unwrap();
            assert!(agent
                .iter()
                .all(|u| u.speaker == Speaker::Agent && u.channel == 0));
            let client = transcribe(
                &Counting,
                &audio,
                &Options {
                    agent_channel: 1,
                    diarize,
                },
            )
            .await
            .unwrap();
            assert!(client.iter().all(|u| u.speaker == Speaker::Client));
            assert_eq!(client.len(), 2);
        }
        let error = transcribe(
            &Counting,
            &audio,
            &Options {
                agent_channel: 2,
                diarize: false,
            },
        )
        .await
        .unwrap_err();
        assert!(matches!(error, SpeechError::Rejected(_)));
    }

    #[test]
    fn words_go_to_the_speaker_turn_they_start_in() {
        let word = |text: &str, start: f64| Word {
            word: text.into(),
            start,
            end: start + 0.3,
            confidence: 0.9,
        };
        let words = || {
            vec![
                word("thank", 0.0),
                word("you", 0.4),
                word("hello", 1.0),
                word("there", 1.4),
                word("fine", 2.0),
            ]
        };
        let texts = |groups: Vec<(Vec<Word>, u8)>| -> Vec<(String, u8)> {
            groups
                .into_iter()
                .map(|(words, label)| {
                    let text: Vec<String> = words.into_iter().map(|w| w.word).collect();
                    (text.join(" "), label)
                })
                .collect()
        };
        // Changes halfway through the pauses before "hello" and before "fine".
        assert_eq!(
            texts(split_at_turns(words(), &[(0.0, 0), (0.85, 1), (1.85, 0)])),
            [
                ("thank you".to_string(), 0),
                ("hello there".to_string(), 1),
                ("fine".to_string(), 0)
            ]
        );
        // One turn is one utterance, whoever speaks it.
        assert_eq!(
            texts(split_at_turns(words(), &[(0.0, 1)])),
            [("thank you hello there fine".to_string(), 1)]
        );
    }

    #[test]
    fn transcript_json_rounds_as_documented() {
        let words = vec![
            Word {
                word: "thank".into(),
                start: 0.5213,
                end: 0.7049,
                confidence: 0.93449,
            },
            Word {
                word: "you".into(),
                start: 0.71,
                end: 3.2,
                confidence: 0.8876,
            },
        ];
        let utterance = Utterance {
            speaker: Speaker::Agent,
            channel: 0,
            start: 0.5213,
            end: 3.2,
            confidence: (0.93449 + 0.8876) / 2.0,
            text: "thank you".into(),
            words,
        };
        let json = Value::Object(transcript_json(&[utterance], 312.4961, "call-0001.wav"));
        assert_eq!(
            json,
            json!({"filename": "call-0001.wav", "audio_seconds": 312.5,
                   "utterances": [{"speaker": "agent", "channel": 0, "start": 0.52, "end": 3.2,
                                   "confidence": 0.911, "text": "thank you",
                                   "words": [{"word": "thank", "start": 0.52, "end": 0.7, "confidence": 0.934},
                                             {"word": "you", "start": 0.71, "end": 3.2, "confidence": 0.888}]}]})
        );
    }
}
