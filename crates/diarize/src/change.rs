//! Speaker changes inside one recognizer segment.
//!
//! A recognizer cuts its segments at pauses, and the two people on a call do not always leave one between
//! them: a client who answers at once, or starts before the agent has quite finished, lands in the agent's
//! segment, and labelling whole segments then gives the client's words to the agent. Within one segment
//! there is too little of each voice to tell them apart by the segment alone, so the voices are learnt
//! from the whole call first: once the segments are labelled whole, each speaker's speech frames give a
//! diagonal Gaussian over the cepstra and the log pitch ([`Voice`]). Each segment is then read word by word
//! (between the recognizer's word boundaries, the `cuts`): a word's evidence is how much better the
//! other voice explains its frames than the first voice, and the most likely sequence of speakers over
//! the words (Viterbi, two states) changes speaker only where that gains more than [`SWITCH`] nats. A
//! turn found shorter than [`MIN_TURN_SECONDS`] is given back to its neighbour: so short a stretch says
//! too little about a voice.

use crate::embed;
use crate::features::{Frames, CEPSTRA};
use crate::pitch::Pitch;

/// The log-likelihood (nats) a change of speaker inside a segment must gain. Measured on synthetic calls
/// (docs/benchmarks.md, Diarization).
pub(crate) const SWITCH: f64 = 60.0;
/// The shortest turn kept inside a segment, in seconds.
pub(crate) const MIN_TURN_SECONDS: f64 = 1.0;
/// The fewest speech frames a voice is learnt from.
const MIN_VOICE_FRAMES: usize = 50;

/// One speaker's voice: a diagonal Gaussian over the cepstra of its speech frames, and a Gaussian over
/// the log pitch of its voiced frames.
pub(crate) struct Voice {
    mean: [f64; CEPSTRA],
    variance: [f64; CEPSTRA],
    pitch: Option<(f64, f64)>,
}

impl Voice {
    /// The voice of the given speech frames; None when there are too few.
    pub(crate) fn learn(
        frames: &Frames,
        pitch: &[Option<Pitch>],
        speech: &[usize],
    ) -> Option<Voice> {
        if speech.len() < MIN_VOICE_FRAMES {
            return None;
        }
        let n = speech.len() as f64;
        let (mut mean, mut variance) = ([0f64; CEPSTRA], [0f64; CEPSTRA]);
        for &i in speech {
            for (k, &c) in frames.cepstra[i].iter().enumerate() {
                mean[k] += f64::from(c);
                variance[k] += f64::from(c) * f64::from(c);
            }
        }
        for k in 0..CEPSTRA {
            mean[k] /= n;
            variance[k] = (variance[k] / n - mean[k] * mean[k]).max(1e-6);
        }
        let voiced: Vec<f64> = speech
            .iter()
            .filter_map(|&i| pitch[i])
            .map(|p| f64::from(p.hz.ln()))
            .collect();
        let pitch = (voiced.len() >= 2).then(|| {
            let m = voiced.iter().sum::<f64>() / voiced.len() as f64;
            let v = voiced.iter().map(|x| (x - m).powi(2)).sum::<f64>() / voiced.len() as f64;
            (m, v.max(1e-4))
        });
        Some(Voice {
            mean,
            variance,
            pitch,
        })
    }

    /// The log-likelihood of frame `i` (its constant terms left out, the same for every voice).
    fn log_likelihood(&self, frames: &Frames, pitch: &[Option<Pitch>], i: usize) -> f64 {
        let mut sum = 0.0;
        for (k, &c) in frames.cepstra[i].iter().enumerate() {
            let d = f64::from(c) - self.mean[k];
            sum -= 0.5 * (d * d / self.variance[k] + self.variance[k].ln());
        }
        if let (Some(p), Some((m, v))) = (pitch[i], self.pitch) {
            let d = f64::from(p.hz.ln()) - m;
            sum -= 0.5 * (d * d / v + v.ln());
        }
        sum
    }
}

/// The speaker turns of the segment from `start` to `end`, labelled `label` as a whole, given the two
/// voices of the call (by label) and the boundaries between its words (`cuts`): the start and the label
/// of each turn, the first at `start`, no two in a row with the same label.
pub(crate) fn turns(
    frames: &Frames,
    pitch: &[Option<Pitch>],
    sample_rate: u32,
    voices: &[Voice; 2],
    (start, end): (f64, f64),
    label: u8,
    cuts: &[f64],
) -> Vec<(f64, u8)> {
    let whole = vec![(start, label)];
    let mut bounds: Vec<f64> = cuts
        .iter()
        .copied()
        .filter(|c| c.is_finite() && *c > start && *c < end)
        .collect();
    if bounds.is_empty() || end - start < 2.0 * MIN_TURN_SECONDS {
        return whole;
    }
    bounds.sort_by(f64::total_cmp);
    bounds.dedup();
    bounds.insert(0, start);
    bounds.push(end);
    // Each word's evidence for the second voice over the first, over its speech frames (those within
    // 30 dB of the segment's loudest).
    let speech = embed::speech_frames(frames, frames.range(sample_rate, start, end));
    let evidence: Vec<f64> = bounds
        .windows(2)
        .map(|word| {
            let range = frames.range(sample_rate, word[0], word[1]);
            let from = speech.partition_point(|&i| i < range.start);
            let to = speech.partition_point(|&i| i < range.end);
            speech[from..to]
                .iter()
                .map(|&i| {
                    voices[1].log_likelihood(frames, pitch, i)
                        - voices[0].log_likelihood(frames, pitch, i)
                })
                .sum()
        })
        .collect();
    let mut labels = viterbi(&evidence);
    give_back_short_turns(&bounds, &mut labels);
    if labels.iter().all(|&l| l == labels[0]) {
        // No change inside: the segment keeps the label the whole call gave it.
        return whole;
    }
    let mut found: Vec<(f64, u8)> = Vec::new();
    for (k, &l) in labels.iter().enumerate() {
        if found.last().is_none_or(|&(_, last)| last != l) {
            found.push((bounds[k], l));
        }
    }
    found
}

/// The most likely speaker of each word, given each word's evidence for speaker 1 over speaker 0 and the
/// price [`SWITCH`] of every change.
fn viterbi(evidence: &[f64]) -> Vec<u8> {
    // score[s]: the best total ending in speaker s; from[k][s]: the speaker before word k on that path.
    let mut score = [0.0, evidence[0]];
    let mut from: Vec<[u8; 2]> = vec![[0, 1]];
    for &e in &evidence[1..] {
        let mut next = [0.0; 2];
        let mut back = [0u8; 2];
        for s in 0..2 {
            let stay = score[s];
            let switch = score[1 - s] - SWITCH;
            (next[s], back[s]) = if stay >= switch {
                (stay, s as u8)
            } else {
                (switch, 1 - s as u8)
            };
        }
        next[1] += e;
        score = next;
        from.push(back);
    }
    let mut s = u8::from(score[1] > score[0]);
    let mut labels = vec![0; evidence.len()];
    for k in (0..evidence.len()).rev() {
        labels[k] = s;
        s = from[k][usize::from(s)];
    }
    labels
}

/// Gives every run of words of one speaker shorter than [`MIN_TURN_SECONDS`] to the run before it (or
/// after it, for the first), shortest first, until none is left or one run covers the segment.
fn give_back_short_turns(bounds: &[f64], labels: &mut [u8]) {
    loop {
        // The runs: first word, last word + 1.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for k in 0..labels.len() {
            match runs.last_mut() {
                Some(run) if labels[run.0] == labels[k] => run.1 = k + 1,
                _ => runs.push((k, k + 1)),
            }
        }
        if runs.len() < 2 {
            return;
        }
        let length = |&(a, b): &(usize, usize)| bounds[b] - bounds[a];
        let Some(shortest) = runs
            .iter()
            .filter(|r| length(r) < MIN_TURN_SECONDS)
            .min_by(|a, b| length(a).total_cmp(&length(b)))
        else {
            return;
        };
        let other = 1 - labels[shortest.0];
        labels[shortest.0..shortest.1].fill(other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_made_only_where_it_gains_more_than_it_costs() {
        // Weak evidence for the other voice in one word: no change; strong evidence over three words:
        // one change there, and back.
        assert_eq!(viterbi(&[-10.0, 20.0, -10.0, -10.0]), [0, 0, 0, 0]);
        assert_eq!(
            viterbi(&[-40.0, -40.0, 50.0, 50.0, 50.0, -30.0, -40.0]),
            [0, 0, 1, 1, 1, 0, 0]
        );
        // A segment that starts with the other voice.
        assert_eq!(viterbi(&[90.0, 80.0, -70.0, -90.0]), [1, 1, 0, 0]);
    }

    #[test]
    fn short_turns_go_back_to_their_neighbours() {
        // Words of 0.5 s: a turn of one word inside is too short; one of three is kept.
        let bounds: Vec<f64> = (0..=8).map(|k| k as f64 * 0.5).collect();
        let mut labels = [0, 0, 0, 1, 0, 0, 0, 0];
        give_back_short_turns(&bounds, &mut labels);
        assert_eq!(labels, [0; 8]);
        let mut labels = [0, 0, 1, 1, 1, 0, 0, 0];
        give_back_short_turns(&bounds, &mut labels);
        assert_eq!(labels, [0, 0, 1, 1, 1, 0, 0, 0]);
        // A short first turn joins the one after it.
        let mut labels = [1, 0, 0, 0, 0, 0, 0, 0];
        give_back_short_turns(&bounds, &mut labels);
        assert_eq!(labels, [0; 8]);
    }
}
