//! Recordings for the tests of this crate and of the services that use it (feature `testing`).

use std::io::Cursor;

use crate::audio::{self, SAMPLE_RATE};

/// A stereo 8 kHz WAV: `left` then silence in the left channel, silence then `right` in the right one,
/// a second apart. Returns the file and the second at which the right channel's clip starts.
pub fn stereo_call(left: &[i16], right: &[i16]) -> (Vec<u8>, f64) {
    let left = audio::resample(left, SAMPLE_RATE, 8_000).unwrap();
    let right = audio::resample(right, SAMPLE_RATE, 8_000).unwrap();
    let gap = 8_000;
    let frames = left.len() + gap + right.len();
    let mut cursor = Cursor::new(Vec::new());
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 8_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::new(&mut cursor, spec).unwrap();
    for i in 0..frames {
        let l = left.get(i).copied().unwrap_or(0);
        let r = i
            .checked_sub(left.len() + gap)
            .and_then(|j| right.get(j).copied())
            .unwrap_or(0);
        writer.write_sample(l).unwrap();
        writer.write_sample(r).unwrap();
    }
    writer.finalize().unwrap();
    (cursor.into_inner(), (left.len() + gap) as f64 / 8_000.0)
}
