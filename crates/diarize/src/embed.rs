//! Segment embeddings: one vector per segment that is close for segments of one speaker.
//!
//! A segment's frames are reduced to statistics that keep the voice and average away what was said: the
//! mean and standard deviation of each cepstral coefficient over the segment's speech frames, and the
//! mean log pitch over its voiced frames. Speech frames are those within 30 dB of the segment's loudest
//! frame, so pauses and line noise inside a segment do not count.
//!
//! Frames are first normalised over the whole call (every coefficient to mean 0 and variance 1 over all
//! speech frames of all segments: cepstral mean and variance normalisation), which removes the channel
//! both speakers share. The embeddings are then standardised the same way across the call's segments, so
//! each dimension weighs by how much it varies from segment to segment rather than by its units, and
//! cosine distance between them is meaningful (a diagonal Mahalanobis distance, centred on the call).

use crate::features::{Frames, CEPSTRA};
use crate::pitch::Pitch;

/// Speech frames are within this many nepers of energy (30 dB: ln 1000) of the segment's loudest.
const SPEECH_RANGE: f32 = 6.9;
/// Weight of the pitch dimension relative to one cepstral statistic, after standardisation (measured on
/// 60 synthetic calls: 0, 1, 3, 4, 6 and 10 did worse).
pub(crate) const PITCH_WEIGHT: f32 = 2.0;
/// Weight of the standard deviations relative to the means (measured: 0, 0.25, 0.5 and 1.5 did worse).
pub(crate) const STD_WEIGHT: f32 = 1.0;

/// Length of an embedding.
pub(crate) const DIM: usize = 2 * CEPSTRA + 1;

/// The speech frames of one stretch of the call.
pub(crate) fn speech_frames(frames: &Frames, range: std::ops::Range<usize>) -> Vec<usize> {
    let Some(loudest) = frames.log_energy[range.clone()]
        .iter()
        .copied()
        .reduce(f32::max)
    else {
        return Vec::new();
    };
    range
        .filter(|&i| frames.log_energy[i] >= loudest - SPEECH_RANGE)
        .collect()
}

/// Per-call normalisation of frames: mean and standard deviation of each coefficient and of log pitch.
pub(crate) struct CallStats {
    mean: [f32; CEPSTRA],
    std: [f32; CEPSTRA],
    pitch_mean: f32,
    pitch_std: f32,
}

impl CallStats {
    /// Statistics over the given speech frames (all segments of the call).
    pub fn new(frames: &Frames, pitch: &[Option<Pitch>], speech: &[usize]) -> Self {
        let mut mean = [0f64; CEPSTRA];
        let mut square = [0f64; CEPSTRA];
        let (mut p_sum, mut p_square, mut p_count) = (0f64, 0f64, 0f64);
        for &i in speech {
            for (k, &c) in frames.cepstra[i].iter().enumerate() {
                mean[k] += f64::from(c);
                square[k] += f64::from(c) * f64::from(c);
            }
            if let Some(p) = pitch[i] {
                let l = f64::from(p.hz.ln());
                p_sum += l;
                p_square += l * l;
                p_count += 1.0;
            }
        }
        let n = (speech.len() as f64).max(1.0);
        let mut stats = CallStats {
            mean: [0.0; CEPSTRA],
            std: [1.0; CEPSTRA],
            pitch_mean: 0.0,
            pitch_std: 1.0,
        };
        for k in 0..CEPSTRA {
            let m = mean[k] / n;
            stats.mean[k] = m as f32;
            stats.std[k] = ((square[k] / n - m * m).max(0.0).sqrt() as f32).max(1e-3);
        }
        if p_count > 0.0 {
            let m = p_sum / p_count;
            stats.pitch_mean = m as f32;
            stats.pitch_std = ((p_square / p_count - m * m).max(0.0).sqrt() as f32).max(0.05);
        }
        stats
    }

    /// The raw embedding of a stretch given its speech frames: normalised cepstral means, standard
    /// deviations, and the normalised mean log pitch (0, the call's mean, when no frame is voiced).
    pub fn embed(&self, frames: &Frames, pitch: &[Option<Pitch>], speech: &[usize]) -> [f32; DIM] {
        let mut out = [0f32; DIM];
        let n = speech.len().max(1) as f32;
        let mut square = [0f32; CEPSTRA];
        let (mut p_sum, mut p_count) = (0f32, 0f32);
        for &i in speech {
            for k in 0..CEPSTRA {
                let z = (frames.cepstra[i][k] - self.mean[k]) / self.std[k];
                out[k] += z;
                square[k] += z * z;
            }
            if let Some(p) = pitch[i] {
                p_sum += (p.hz.ln() - self.pitch_mean) / self.pitch_std;
                p_count += 1.0;
            }
        }
        for k in 0..CEPSTRA {
            out[k] /= n;
            out[CEPSTRA + k] = (square[k] / n - out[k] * out[k]).max(0.0).sqrt();
        }
        if p_count > 0.0 {
            out[2 * CEPSTRA] = p_sum / p_count;
        }
        out
    }
}

/// Standardises embeddings across segments (weighted by `weights`) and applies the dimension weights,
/// in place.
pub(crate) fn standardise(embeddings: &mut [[f32; DIM]], weights: &[f32]) {
    let total: f32 = weights.iter().sum();
    if embeddings.is_empty() || total <= 0.0 {
        return;
    }
    for d in 0..DIM {
        let mean = embeddings
            .iter()
            .zip(weights)
            .map(|(e, w)| e[d] * w)
            .sum::<f32>()
            / total;
        let var = embeddings
            .iter()
            .zip(weights)
            .map(|(e, w)| (e[d] - mean).powi(2) * w)
            .sum::<f32>()
            / total;
        let std = var.sqrt().max(1e-4);
        let weight = if d == 2 * CEPSTRA {
            PITCH_WEIGHT
        } else if d >= CEPSTRA {
            STD_WEIGHT
        } else {
            1.0
        };
        for e in embeddings.iter_mut() {
            e[d] = (e[d] - mean) / std * weight;
        }
    }
}
