//! Pitch: how high a voice is, per 10 ms frame.
//!
//! Two speakers on one line often differ most plainly in pitch (a man and a woman by an octave), and
//! pitch survives the telephone band, which cuts the upper formants that MFCCs describe. The estimate is
//! the autocorrelation method (Boersma, 1993): a 40 ms Hann window (two periods of the lowest voice), its
//! autocorrelation by FFT, divided by the window's own autocorrelation, and the shortest-lag peak
//! between 60 and 400 Hz within 10 % of the highest (a period's multiples peak as high as the period).
//! A frame is voiced when that peak is at least [`VOICING`] of the zero-lag value.

use realfft::{num_complex::Complex, RealFftPlanner};

/// Pitch window length in seconds.
const WINDOW_SECONDS: f64 = 0.040;
/// Lowest pitch searched, Hz.
const MIN_HZ: f64 = 60.0;
/// Highest pitch searched, Hz.
const MAX_HZ: f64 = 400.0;
/// A peak at a shorter lag wins over the highest peak when at least this fraction of it.
const OCTAVE_TOLERANCE: f32 = 0.9;
/// Normalised autocorrelation above which a frame counts as voiced.
pub(crate) const VOICING: f32 = 0.5;

/// The pitch of one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Pitch {
    /// Fundamental frequency in Hz.
    pub hz: f32,
    /// Normalised autocorrelation at that period, in [0, 1]: how periodic the frame is.
    pub strength: f32,
}

/// Pitch of every frame whose centre is at `window / 2 + i * hop` samples (the frames of
/// [`crate::features::compute`]), or `None` for an unvoiced or silent frame.
pub(crate) fn track(
    samples: &[i16],
    sample_rate: u32,
    window: usize,
    hop: usize,
    count: usize,
) -> Vec<Option<Pitch>> {
    let rate = f64::from(sample_rate);
    let len = ((WINDOW_SECONDS * rate).round() as usize).max(8);
    let min_lag = ((rate / MAX_HZ).floor() as usize).max(2);
    let max_lag = ((rate / MIN_HZ).ceil() as usize).min(len - 1);
    let fft_len = (2 * len).next_power_of_two();
    let hann: Vec<f32> = (0..len)
        .map(|n| {
            (0.5 - 0.5 * (2.0 * std::f64::consts::PI * (n as f64 + 0.5) / len as f64).cos()) as f32
        })
        .collect();

    let mut planner = RealFftPlanner::<f32>::new();
    let forward = planner.plan_fft_forward(fft_len);
    let inverse = planner.plan_fft_inverse(fft_len);
    let mut input = forward.make_input_vec();
    let mut spectrum = forward.make_output_vec();
    let mut lags = inverse.make_output_vec();

    let mut autocorrelate = |frame: &[f32], out: &mut Vec<f32>| {
        input.iter_mut().for_each(|x| *x = 0.0);
        input[..frame.len()].copy_from_slice(frame);
        forward.process(&mut input, &mut spectrum).ok();
        for c in spectrum.iter_mut() {
            *c = Complex::new(c.norm_sqr(), 0.0);
        }
        inverse.process(&mut spectrum, &mut lags).ok();
        out.clear();
        out.extend_from_slice(&lags[..=max_lag]);
    };
    let mut window_ac = Vec::new();
    autocorrelate(&hann, &mut window_ac);
    let w0 = window_ac[0];

    let mut frame = vec![0f32; len];
    let mut ac = Vec::new();
    (0..count)
        .map(|i| {
            let centre = (window / 2 + i * hop) as isize;
            let start = centre - (len / 2) as isize;
            let mut sum = 0f32;
            let mut n = 0f32;
            for (k, slot) in frame.iter_mut().enumerate() {
                let j = start + k as isize;
                *slot = if j >= 0 && (j as usize) < samples.len() {
                    f32::from(samples[j as usize])
                } else {
                    0.0
                };
                sum += *slot;
                n += 1.0;
            }
            let mean = sum / n;
            for (slot, w) in frame.iter_mut().zip(&hann) {
                *slot = (*slot - mean) * w;
            }
            autocorrelate(&frame, &mut ac);
            if ac[0] <= 1e-3 {
                return None;
            }
            let r = |lag: usize| (ac[lag] / ac[0]) / (window_ac[lag] / w0);
            // Local peaks; every multiple of the period peaks about as high as the period itself, so
            // the shortest lag whose peak is within `OCTAVE_TOLERANCE` of the highest wins.
            let peaks: Vec<(usize, f32)> = (min_lag..=max_lag)
                .map(|lag| (lag, r(lag)))
                .filter(|&(lag, v)| v >= r(lag - 1) && v >= r((lag + 1).min(max_lag)))
                .collect();
            let highest = peaks.iter().map(|p| p.1).fold(f32::MIN, f32::max);
            let &best = peaks.iter().find(|p| p.1 >= highest * OCTAVE_TOLERANCE)?;
            if best.1 < VOICING {
                return None;
            }
            // Parabolic interpolation of the peak for a period finer than one sample.
            let (lag, v) = best;
            let (a, c) = (r(lag - 1), r((lag + 1).min(max_lag)));
            let denominator = a - 2.0 * v + c;
            let shift = if denominator.abs() > 1e-9 {
                (0.5 * (a - c) / denominator).clamp(-0.5, 0.5)
            } else {
                0.0
            };
            let period = lag as f32 + shift;
            Some(Pitch {
                hz: sample_rate as f32 / period,
                strength: v.min(1.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pulse_train(hz: f64, seconds: f64, rate: u32) -> Vec<i16> {
        // A glottal-like periodic wave: the fundamental and three harmonics.
        let n = (seconds * f64::from(rate)) as usize;
        (0..n)
            .map(|i| {
                let t = 2.0 * std::f64::consts::PI * hz * i as f64 / f64::from(rate);
                (4000.0
                    * (t.sin()
                        + 0.6 * (2.0 * t).sin()
                        + 0.4 * (3.0 * t).sin()
                        + 0.2 * (4.0 * t).sin())) as i16
            })
            .collect()
    }

    #[test]
    fn finds_the_pitch_of_a_periodic_wave() {
        for (hz, rate) in [(110.0, 16_000), (220.0, 16_000), (180.0, 8_000)] {
            let samples = pulse_train(hz, 0.5, rate);
            let track = track(&samples, rate, 400, 160, 20);
            let p = track[10].expect("voiced");
            assert!(
                (f64::from(p.hz) - hz).abs() < hz * 0.02,
                "{hz} Hz at {rate}: {p:?}"
            );
            assert!(p.strength > 0.9);
        }
    }

    #[test]
    fn noise_and_silence_are_unvoiced() {
        let mut x: u32 = 1;
        let noise: Vec<i16> = (0..8000)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                ((x >> 16) as i16) / 4
            })
            .collect();
        let track_noise = track(&noise, 16_000, 400, 160, 40);
        assert!(track_noise.iter().filter(|p| p.is_some()).count() <= 4);
        assert!(track(&[0; 8000], 16_000, 400, 160, 40)
            .iter()
            .all(Option::is_none));
    }
}
