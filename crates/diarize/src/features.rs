//! Frame-level features: what a voice sounds like every 10 ms.
//!
//! Speakers differ mostly in the shape of their vocal tract (the spectral envelope) and in their pitch.
//! The spectral envelope is summarised the way speech recognisers do it: 25 ms Hamming windows every
//! 10 ms, pre-emphasis, the power spectrum (one real FFT per frame), 40 triangular mel filters, their log
//! energies and a DCT of those: the mel-frequency cepstral coefficients (MFCCs). Coefficient 0 is the
//! frame's loudness and is kept apart (as [`Frames::log_energy`]) to tell speech from pauses; it says
//! nothing of who speaks, since loudness depends on the line. Pitch is in [`crate::pitch`].

use realfft::{num_complex::Complex, RealFftPlanner};

/// Window length in seconds.
pub(crate) const WINDOW_SECONDS: f64 = 0.025;
/// Hop between frames in seconds.
pub(crate) const HOP_SECONDS: f64 = 0.010;
/// Mel filters.
const MEL_FILTERS: usize = 40;
/// Cepstral coefficients kept after coefficient 0 (c1 ..= c19).
pub(crate) const CEPSTRA: usize = 19;
/// Lowest filter edge in Hz: below it is mains hum and the telephone band's floor.
const LOW_HZ: f64 = 60.0;
/// Highest filter edge in Hz (or the Nyquist frequency when lower).
const HIGH_HZ: f64 = 7600.0;
/// Pre-emphasis coefficient: flattens speech's falling spectrum so the upper formants count.
const PRE_EMPHASIS: f32 = 0.97;

/// The features of every frame of a recording.
pub(crate) struct Frames {
    /// Samples between frame starts.
    pub hop: usize,
    /// Samples per frame.
    pub window: usize,
    /// `CEPSTRA` coefficients per frame, frame after frame.
    pub cepstra: Vec<[f32; CEPSTRA]>,
    /// Natural log of each frame's energy (after pre-emphasis and windowing).
    pub log_energy: Vec<f32>,
}

impl Frames {
    /// Frame count.
    pub fn len(&self) -> usize {
        self.log_energy.len()
    }

    /// Index range of the frames whose centre lies in `[start, end)` seconds.
    pub fn range(&self, sample_rate: u32, start: f64, end: f64) -> std::ops::Range<usize> {
        let rate = f64::from(sample_rate);
        let centre = self.window as f64 / 2.0;
        let index = |t: f64| -> usize {
            let x = ((t * rate - centre) / self.hop as f64).ceil();
            if x <= 0.0 {
                0
            } else {
                (x as usize).min(self.len())
            }
        };
        let (a, b) = (index(start), index(end));
        a..b.max(a)
    }
}

/// Computes the frame features of `samples`.
pub(crate) fn compute(samples: &[i16], sample_rate: u32) -> Frames {
    let rate = f64::from(sample_rate);
    let window = ((WINDOW_SECONDS * rate).round() as usize).max(16);
    let hop = ((HOP_SECONDS * rate).round() as usize).max(1);
    let fft_len = window.next_power_of_two();
    let hamming: Vec<f32> = (0..window)
        .map(|n| {
            (0.54 - 0.46 * (2.0 * std::f64::consts::PI * n as f64 / (window - 1) as f64).cos())
                as f32
        })
        .collect();
    let filters = mel_filters(fft_len, rate);
    let dct = dct_matrix();

    let fft = RealFftPlanner::<f32>::new().plan_fft_forward(fft_len);
    let mut input = fft.make_input_vec();
    let mut spectrum = fft.make_output_vec();
    let mut scratch = fft.make_scratch_vec();
    let mut power = vec![0f32; spectrum.len()];
    let mut mel = [0f32; MEL_FILTERS];

    let count = if samples.len() >= window {
        (samples.len() - window) / hop + 1
    } else {
        0
    };
    let mut cepstra = Vec::with_capacity(count);
    let mut log_energy = Vec::with_capacity(count);
    for f in 0..count {
        let start = f * hop;
        let frame = &samples[start..start + window];
        let previous = if start > 0 {
            f32::from(samples[start - 1])
        } else {
            f32::from(frame[0])
        };
        // Remove the frame's DC offset before pre-emphasis so a biased line does not add low energy.
        let mean = frame.iter().map(|&s| f32::from(s)).sum::<f32>() / window as f32;
        let mut last = previous - mean;
        let mut energy = 0f32;
        for (i, slot) in input.iter_mut().enumerate() {
            *slot = if i < window {
                let x = f32::from(frame[i]) - mean;
                let y = (x - PRE_EMPHASIS * last) * hamming[i];
                last = x;
                energy += y * y;
                y
            } else {
                0.0
            };
        }
        // A frame of one length and a plan of that length: process cannot fail.
        fft.process_with_scratch(&mut input, &mut spectrum, &mut scratch)
            .ok();
        for (p, c) in power.iter_mut().zip(&spectrum) {
            *p = Complex::norm_sqr(c);
        }
        for (m, filter) in mel.iter_mut().zip(&filters) {
            let e: f32 = filter
                .weights
                .iter()
                .enumerate()
                .map(|(k, w)| w * power[filter.first + k])
                .sum();
            *m = (e + 1.0).ln();
        }
        let mut c = [0f32; CEPSTRA];
        for (k, out) in c.iter_mut().enumerate() {
            *out = dct[k].iter().zip(&mel).map(|(a, b)| a * b).sum();
        }
        cepstra.push(c);
        log_energy.push((energy + 1.0).ln());
    }
    Frames {
        hop,
        window,
        cepstra,
        log_energy,
    }
}

/// One triangular mel filter: its weights over the FFT bins from `first` on.
struct Filter {
    first: usize,
    weights: Vec<f32>,
}

fn hz_to_mel(hz: f64) -> f64 {
    2595.0 * (1.0 + hz / 700.0).log10()
}

fn mel_to_hz(mel: f64) -> f64 {
    700.0 * (10f64.powf(mel / 2595.0) - 1.0)
}

/// Triangular filters evenly spaced on the mel scale between `LOW_HZ` and `HIGH_HZ` (or Nyquist).
fn mel_filters(fft_len: usize, rate: f64) -> Vec<Filter> {
    let high = HIGH_HZ.min(rate / 2.0);
    let (lo, hi) = (hz_to_mel(LOW_HZ), hz_to_mel(high));
    let edges: Vec<f64> = (0..MEL_FILTERS + 2)
        .map(|i| mel_to_hz(lo + (hi - lo) * i as f64 / (MEL_FILTERS + 1) as f64))
        .collect();
    let bin_hz = rate / fft_len as f64;
    let bins = fft_len / 2 + 1;
    (0..MEL_FILTERS)
        .map(|m| {
            let (left, centre, right) = (edges[m], edges[m + 1], edges[m + 2]);
            let first = ((left / bin_hz).floor() as usize).min(bins - 1);
            let last = ((right / bin_hz).ceil() as usize).min(bins - 1);
            let weights = (first..=last)
                .map(|k| {
                    let f = k as f64 * bin_hz;
                    let w = if f <= centre {
                        (f - left) / (centre - left)
                    } else {
                        (right - f) / (right - centre)
                    };
                    w.max(0.0) as f32
                })
                .collect();
            Filter { first, weights }
        })
        .collect()
}

/// Rows of the orthonormal DCT-II for coefficients 1 ..= `CEPSTRA`.
fn dct_matrix() -> Vec<[f32; MEL_FILTERS]> {
    let n = MEL_FILTERS as f64;
    (1..=CEPSTRA)
        .map(|k| {
            let mut row = [0f32; MEL_FILTERS];
            for (i, r) in row.iter_mut().enumerate() {
                *r = ((2.0 / n).sqrt()
                    * (std::f64::consts::PI * k as f64 * (i as f64 + 0.5) / n).cos())
                    as f32;
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(hz: f64, seconds: f64, rate: u32) -> Vec<i16> {
        let n = (seconds * f64::from(rate)) as usize;
        (0..n)
            .map(|i| {
                (8000.0 * (2.0 * std::f64::consts::PI * hz * i as f64 / f64::from(rate)).sin())
                    as i16
            })
            .collect()
    }

    #[test]
    fn frame_count_and_ranges_follow_the_hop() {
        let frames = compute(&tone(440.0, 1.0, 16_000), 16_000);
        // (16000 - 400) / 160 + 1
        assert_eq!(frames.len(), 98);
        assert_eq!(frames.range(16_000, 0.0, 1.0), 0..98);
        // Centres at 0.0125 + 0.01 i: [0.5, 0.6) holds i = 49 ..= 58.
        assert_eq!(frames.range(16_000, 0.5, 0.6), 49..59);
        assert_eq!(frames.range(16_000, 2.0, 3.0), 98..98);
    }

    #[test]
    fn different_tones_have_different_cepstra_and_silence_has_low_energy() {
        let low = compute(&tone(300.0, 0.5, 16_000), 16_000);
        let high = compute(&tone(2500.0, 0.5, 16_000), 16_000);
        let quiet = compute(&vec![0i16; 8000], 16_000);
        let distance: f32 = low.cepstra[10]
            .iter()
            .zip(&high.cepstra[10])
            .map(|(a, b)| (a - b).powi(2))
            .sum();
        assert!(distance > 1.0, "{distance}");
        assert!(
            quiet.log_energy[0] < 1.0 && low.log_energy[10] > 10.0,
            "{} {}",
            quiet.log_energy[0],
            low.log_energy[10]
        );
    }

    #[test]
    fn short_input_gives_no_frames() {
        assert_eq!(compute(&[1, 2, 3], 8000).len(), 0);
        assert_eq!(compute(&[], 8000).len(), 0);
    }
}
