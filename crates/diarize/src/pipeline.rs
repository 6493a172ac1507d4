//! The diarization of one call: features, speaker changes inside segments (when asked), embeddings,
//! clustering and labels, in that order.

use crate::features::Frames;
use crate::pitch::Pitch;
use crate::{change, cluster, embed, features, pitch, short, single};

/// Segments with fewer speech frames than this are labelled by their neighbours, like short ones.
const MIN_SPEECH_FRAMES: usize = 10;

/// One label, 0 or 1, per segment of `segments` (start and end in seconds into `samples`, mono PCM at
/// `sample_rate`). Label 0 is the speaker of the first segment (the agent, who answers the call).
///
/// Segments may be in any order and may overlap; parts outside the audio count as silence. A call with
/// fewer than two segments long enough to embed gets all 0.
pub fn diarize(samples: &[i16], sample_rate: u32, segments: &[(f64, f64)]) -> Vec<u8> {
    if segments.is_empty() {
        return Vec::new();
    }
    let (frames, pitch) = analyse(samples, sample_rate);
    label(&frames, &pitch, sample_rate, segments)
}

/// A recognizer segment, from `start` to `end` in seconds, and the times between its words (`cuts`),
/// where the other speaker may have taken over without a pause.
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    pub start: f64,
    pub end: f64,
    pub cuts: &'a [f64],
}

/// Like [`diarize`], but a span may hold both speakers: for each span, its speaker turns in time order,
/// as the start and the label of each. The first starts at the span's start, each other at one of its
/// cuts, and no two in a row have the same label; a span spoken by one speaker is one turn. Label 0 is
/// the speaker of the first turn in time.
pub fn diarize_spans(samples: &[i16], sample_rate: u32, spans: &[Span<'_>]) -> Vec<Vec<(f64, u8)>> {
    if spans.is_empty() {
        return Vec::new();
    }
    let (frames, pitch) = analyse(samples, sample_rate);
    // Each span labelled whole first: the two voices are learnt from the speech of each label's spans.
    let segments: Vec<(f64, f64)> = spans.iter().map(|s| (s.start, s.end)).collect();
    let labels = label(&frames, &pitch, sample_rate, &segments);
    let mut turns: Vec<Vec<(f64, u8)>> = spans
        .iter()
        .zip(labels)
        .map(|(span, label)| vec![(span.start, label)])
        .collect();
    // The voices learnt from segments labelled whole include the other voice's turns inside them, which
    // hides those turns: the voices are learnt again from the turns found, a few times.
    for _ in 0..RESEGMENTATIONS {
        let Some(voices) = learn_voices(&frames, &pitch, sample_rate, spans, &turns) else {
            // One speaker (or too little of the second): nothing to change to.
            break;
        };
        let next: Vec<Vec<(f64, u8)>> = spans
            .iter()
            .zip(&turns)
            .map(|(span, turns)| {
                change::turns(
                    &frames,
                    &pitch,
                    sample_rate,
                    &voices,
                    (span.start, span.end),
                    // The label the whole call gave the segment: that of most of its time.
                    majority(span, turns),
                    span.cuts,
                )
            })
            .collect();
        if next == turns {
            break;
        }
        turns = next;
    }
    // Label 0 is the first turn's speaker, which a change at the start of the first span may have made 1.
    let first = turns
        .iter()
        .filter_map(|t| t.first())
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(0, |&(_, label)| label);
    if first == 1 {
        for (_, label) in turns.iter_mut().flatten() {
            *label = 1 - *label;
        }
    }
    turns
}

/// How many times the voices are learnt again from the turns found (`diarize_spans`).
const RESEGMENTATIONS: usize = 3;

/// Each speaker's voice, from the speech frames of its turns; None unless both have enough.
fn learn_voices(
    frames: &Frames,
    pitch: &[Option<Pitch>],
    sample_rate: u32,
    spans: &[Span<'_>],
    turns: &[Vec<(f64, u8)>],
) -> Option<[change::Voice; 2]> {
    let mut speech: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (span, turns) in spans.iter().zip(turns) {
        for (start, end, label) in stretches(span, turns) {
            speech[usize::from(label)].extend(embed::speech_frames(
                frames,
                frames.range(sample_rate, start, end),
            ));
        }
    }
    Some([
        change::Voice::learn(frames, pitch, &speech[0])?,
        change::Voice::learn(frames, pitch, &speech[1])?,
    ])
}

/// The label of most of a span's time.
fn majority(span: &Span<'_>, turns: &[(f64, u8)]) -> u8 {
    let mut time = [0.0; 2];
    for (start, end, label) in stretches(span, turns) {
        time[usize::from(label)] += end - start;
    }
    u8::from(time[1] > time[0])
}

/// A span's turns as stretches of time: start, end (the next turn's start, or the span's end) and label.
fn stretches<'t>(
    span: &Span<'_>,
    turns: &'t [(f64, u8)],
) -> impl Iterator<Item = (f64, f64, u8)> + 't {
    let end = span.end;
    turns.iter().enumerate().map(move |(k, &(start, label))| {
        (start, turns.get(k + 1).map_or(end, |next| next.0), label)
    })
}

/// The frames' features and pitch of the whole call.
fn analyse(samples: &[i16], sample_rate: u32) -> (Frames, Vec<Option<Pitch>>) {
    let frames = features::compute(samples, sample_rate);
    let pitch = pitch::track(
        samples,
        sample_rate,
        frames.window,
        frames.hop,
        frames.len(),
    );
    (frames, pitch)
}

/// One label per segment (at least one), from the call's frames.
fn label(
    frames: &Frames,
    pitch: &[Option<Pitch>],
    sample_rate: u32,
    segments: &[(f64, f64)],
) -> Vec<u8> {
    let speech: Vec<Vec<usize>> = segments
        .iter()
        .map(|&(s, e)| embed::speech_frames(frames, frames.range(sample_rate, s, e)))
        .collect();
    let usable: Vec<usize> = (0..segments.len())
        .filter(|&i| {
            let (s, e) = segments[i];
            e - s >= short::MIN_SECONDS && speech[i].len() >= MIN_SPEECH_FRAMES
        })
        .collect();

    let all_speech: Vec<usize> = usable
        .iter()
        .flat_map(|&i| speech[i].iter().copied())
        .collect();
    let stats = embed::CallStats::new(frames, pitch, &all_speech);
    let mut embeddings: Vec<[f32; embed::DIM]> = usable
        .iter()
        .map(|&i| stats.embed(frames, pitch, &speech[i]))
        .collect();
    let weights: Vec<f32> = usable.iter().map(|&i| speech[i].len() as f32).collect();
    embed::standardise(&mut embeddings, &weights);

    let points: Vec<Vec<f32>> = embeddings.iter().map(|e| e.to_vec()).collect();
    let mut clustered = cluster::two_means(&points, &weights);

    let mut groups: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (&i, &l) in usable.iter().zip(&clustered) {
        groups[usize::from(l)].extend_from_slice(&speech[i]);
    }
    let gain = single::gain(frames, [&groups[0], &groups[1]])
        + single::pitch_gain(pitch, [&groups[0], &groups[1]]);
    if gain < single::MIN_GAIN {
        clustered.iter_mut().for_each(|l| *l = 0);
    }

    let mut labels = vec![None; segments.len()];
    for (&i, &l) in usable.iter().zip(&clustered) {
        labels[i] = Some(l);
    }
    let mut labels = short::fill(segments, &labels);

    // Label 0 is the first segment's speaker: the first in time, not in the slice.
    let first = (0..segments.len())
        .min_by(|&a, &b| segments[a].0.total_cmp(&segments[b].0))
        .unwrap_or(0);
    if labels[first] == 1 {
        labels.iter_mut().for_each(|l| *l = 1 - *l);
    }
    labels
}
