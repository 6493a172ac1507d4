//! The diarization of one call: features, embeddings, clustering and labels, in that order.

use crate::{cluster, embed, features, pitch, short, single};

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
    let frames = features::compute(samples, sample_rate);
    let pitch = pitch::track(
        samples,
        sample_rate,
        frames.window,
        frames.hop,
        frames.len(),
    );

    let speech: Vec<Vec<usize>> = segments
        .iter()
        .map(|&(s, e)| embed::speech_frames(&frames, frames.range(sample_rate, s, e)))
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
    let stats = embed::CallStats::new(&frames, &pitch, &all_speech);
    let mut embeddings: Vec<[f32; embed::DIM]> = usable
        .iter()
        .map(|&i| stats.embed(&frames, &pitch, &speech[i]))
        .collect();
    let weights: Vec<f32> = usable.iter().map(|&i| speech[i].len() as f32).collect();
    embed::standardise(&mut embeddings, &weights);

    let points: Vec<Vec<f32>> = embeddings.iter().map(|e| e.to_vec()).collect();
    let mut clustered = cluster::two_means(&points, &weights);

    let mut groups: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (&i, &l) in usable.iter().zip(&clustered) {
        groups[usize::from(l)].extend_from_slice(&speech[i]);
    }
    let gain = single::gain(&frames, [&groups[0], &groups[1]])
        + single::pitch_gain(&pitch, [&groups[0], &groups[1]]);
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
