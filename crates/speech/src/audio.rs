//! Decoding of uploaded audio into what the recognizer takes: 16-bit samples at 16 kHz, one vector per
//! channel. Uploads come in whatever the recording system wrote (WAV of any sample format and rate,
//! MP3, FLAC, Ogg Vorbis), so the container and codec are found by probing the bytes (the file name's
//! extension is only a hint), and anything not at 16 kHz is resampled as it is decoded, so that only
//! the 16 kHz result is ever held for the whole recording.
//!
//! Resampled audio is requantized to 16 bits with a triangular dither of one least significant bit, as
//! audio tools do when they write 16-bit files. This matters more than it seems: audio recorded at
//! 8 kHz (telephony) and brought up to 16 kHz has nothing at all above 4 kHz, and PocketSphinx's
//! filterbank then takes the logarithm of empty bands, values far below anything its 16 kHz model was
//! trained on; the dither gives those bands the noise floor of a real recording (on the LibriVox clips
//! taken down to 8 kHz and back, the word error rate is 0.99 without it and 0.83 with it; `sox`,
//! which dithers the same way, gives 0.80). 16-bit audio at 16 kHz is passed through untouched.
//!
//! A channel is a speaker in a stereo call, so more than two channels are refused rather than mixed;
//! recordings longer than the configured limit are refused as soon as the decoder gets past it.

use std::io::Cursor;

use rubato::{FftFixedIn, Resampler};
use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{DecoderOptions, CODEC_TYPE_NULL};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use crate::error::SpeechError;

/// The sample rate of [`Audio`]: what the PocketSphinx model (and the HTTP engine contract) expects.
pub const SAMPLE_RATE: u32 = 16_000;

/// The default limit on a recording's length: two hours.
pub const DEFAULT_MAX_SECONDS: f64 = 7200.0;

/// The sample rates accepted: telephony's 8 kHz up to studio recordings' 192 kHz. Outside them a file is
/// refused before anything is decoded: the resampler's buffers grow with the rate divided by its greatest
/// common divisor with 16 kHz, so a header claiming a rate of billions (or a prime near it) would ask for
/// gigabytes from a file of a few bytes.
pub const SAMPLE_RATES: std::ops::RangeInclusive<u32> = 8_000..=192_000;

/// The formats named to a user whose upload is not one of them.
pub const SUPPORTED_FORMATS: &str = "WAV (PCM, float, A-law, µ-law), MP3, FLAC, Ogg Vorbis";

/// Decoded audio: one vector of 16 kHz samples per channel (one or two), all of the same length.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    pub channels: Vec<Vec<i16>>,
    /// The recording's length.
    pub seconds: f64,
}

/// [`decode_with_limit`] with [`DEFAULT_MAX_SECONDS`].
pub fn decode(bytes: &[u8], name_hint: Option<&str>) -> Result<Audio, SpeechError> {
    decode_with_limit(bytes, name_hint, DEFAULT_MAX_SECONDS)
}

/// Decodes an upload. `name_hint` is its file name, whose extension helps the probe; `max_seconds` is
/// the longest recording accepted.
pub fn decode_with_limit(
    bytes: &[u8],
    name_hint: Option<&str>,
    max_seconds: f64,
) -> Result<Audio, SpeechError> {
    let unsupported = || {
        SpeechError::Unsupported(format!(
            "the file is not audio in a supported format ({SUPPORTED_FORMATS})"
        ))
    };
    if bytes.is_empty() {
        return Err(SpeechError::Rejected("the audio file is empty".into()));
    }
    let mut hint = Hint::new();
    if let Some(extension) = name_hint
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension)
    {
        hint.with_extension(&extension.to_ascii_lowercase());
    }
    let source = MediaSourceStream::new(Box::new(Cursor::new(bytes.to_vec())), Default::default());
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            source,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(|_| unsupported())?;
    let mut format = probed.format;
    let track = format
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or_else(unsupported)?;
    let track_id = track.id;
    let params = track.codec_params.clone();
    let rate = params.sample_rate.filter(|r| *r > 0).ok_or_else(|| {
        SpeechError::Corrupt("the audio file does not state its sample rate".into())
    })?;
    check_rate(rate)?;
    if let Some(channels) = params.channels {
        check_channels(channels.count())?;
    }
    if let Some(frames) = params.n_frames {
        check_length(frames as f64 / f64::from(rate), max_seconds)?;
    }
    let mut decoder = symphonia::default::get_codecs()
        .make(&params, &DecoderOptions::default())
        .map_err(|_| {
            SpeechError::Unsupported(format!(
                "the audio codec of this file is not supported ({SUPPORTED_FORMATS})"
            ))
        })?;

    let max_frames = (max_seconds * f64::from(rate)).ceil() as u64;
    let mut frames: u64 = 0;
    let mut output: Option<Output> = None;
    let mut buffer: Option<SampleBuffer<f32>> = None;
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            Err(SymphoniaError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                break
            }
            // A stream that changes its parameters midway (chained Ogg streams) ends here.
            Err(SymphoniaError::ResetRequired) => break,
            Err(e) => {
                return Err(SpeechError::Corrupt(format!(
                    "the audio cannot be read: {e}"
                )))
            }
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged packet is skipped, as players do; the rest of the call is still worth having.
            Err(SymphoniaError::DecodeError(_)) => continue,
            Err(e) => {
                return Err(SpeechError::Corrupt(format!(
                    "the audio cannot be decoded: {e}"
                )))
            }
        };
        let spec = *decoded.spec();
        let count = spec.channels.count();
        if decoded.frames() == 0 {
            continue;
        }
        let out = match &mut output {
            Some(out) => {
                if out.channels() != count || spec.rate != rate {
                    return Err(SpeechError::Corrupt(
                        "the audio changes its channels or sample rate midway".into(),
                    ));
                }
                out
            }
            None => {
                check_channels(count)?;
                output.insert(Output::new(count, rate, SAMPLE_RATE)?)
            }
        };
        frames += decoded.frames() as u64;
        if frames > max_frames {
            return Err(too_long(max_seconds));
        }
        let samples = match &mut buffer {
            Some(b) if b.capacity() >= decoded.capacity() * count => b,
            _ => buffer.insert(SampleBuffer::new(decoded.capacity() as u64, spec)),
        };
        samples.copy_planar_ref(decoded);
        out.push_planar(samples.samples(), count)?;
    }
    let Some(out) = output else {
        return Err(SpeechError::Rejected(
            "the audio file holds no samples".into(),
        ));
    };
    let channels = out.finish(frames)?;
    Ok(Audio {
        channels,
        seconds: frames as f64 / f64::from(rate),
    })
}

fn check_channels(count: usize) -> Result<(), SpeechError> {
    match count {
        1 | 2 => Ok(()),
        0 => Err(SpeechError::Corrupt("the audio has no channels".into())),
        n => Err(SpeechError::Rejected(format!(
            "the audio has {n} channels; mono or stereo (one speaker per channel) is accepted"
        ))),
    }
}

fn check_rate(rate: u32) -> Result<(), SpeechError> {
    if SAMPLE_RATES.contains(&rate) {
        return Ok(());
    }
    Err(SpeechError::Rejected(format!(
        "the audio's sample rate is {rate} Hz; {} to {} Hz is accepted",
        SAMPLE_RATES.start(),
        SAMPLE_RATES.end()
    )))
}

fn check_length(seconds: f64, max_seconds: f64) -> Result<(), SpeechError> {
    if seconds > max_seconds {
        return Err(too_long(max_seconds));
    }
    Ok(())
}

fn too_long(max_seconds: f64) -> SpeechError {
    SpeechError::Rejected(format!(
        "the audio is longer than {max_seconds} seconds, the longest accepted"
    ))
}

/// Converts a sample in -1..1 to 16 bits. The scale is the one symphonia divides by, so 16-bit input
/// at 16 kHz comes out exactly as it went in.
fn to_i16(sample: f32) -> i16 {
    (sample * 32768.0).round().clamp(-32768.0, 32767.0) as i16
}

/// Frames of input handed to the resampler at a time.
const RESAMPLER_CHUNK: usize = 1024;

/// The 16 kHz channels being built, through a streaming resampler when the input has another rate.
struct Output {
    channels: Vec<Vec<i16>>,
    resampler: Option<Resampling>,
}

struct Resampling {
    resampler: FftFixedIn<f32>,
    /// Input not yet resampled, per channel.
    pending: Vec<Vec<f32>>,
    /// Output frames still to drop: the resampler's delay.
    skip: usize,
    from: u32,
    to: u32,
    dither: Dither,
}

/// Triangular (TPDF) dither of ±1 LSB from a small deterministic generator (xorshift64*): the same
/// upload always gives the same samples, and so the same transcript.
struct Dither(u64);

impl Dither {
    fn new() -> Dither {
        Dither(0x9E37_79B9_7F4A_7C15)
    }

    /// A uniform value in 0..1.
    fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    }

    /// `sample` (in -1..1) as 16 bits, dithered.
    fn quantize(&mut self, sample: f32) -> i16 {
        let noise = self.uniform() - self.uniform();
        to_i16(sample + noise / 32768.0)
    }
}

impl Output {
    fn new(channels: usize, rate: u32, to: u32) -> Result<Output, SpeechError> {
        let resampler = if rate == to {
            None
        } else {
            let resampler =
                FftFixedIn::<f32>::new(rate as usize, to as usize, RESAMPLER_CHUNK, 2, channels)
                    .map_err(|e| {
                        SpeechError::Unsupported(format!("cannot resample {rate} Hz audio: {e}"))
                    })?;
            Some(Resampling {
                skip: resampler.output_delay(),
                resampler,
                pending: vec![Vec::new(); channels],
                from: rate,
                to,
                dither: Dither::new(),
            })
        };
        Ok(Output {
            channels: vec![Vec::new(); channels],
            resampler,
        })
    }

    fn channels(&self) -> usize {
        self.channels.len()
    }

    /// Adds decoded samples, laid out channel after channel.
    fn push_planar(&mut self, planar: &[f32], count: usize) -> Result<(), SpeechError> {
        let frames = planar.len() / count;
        match &mut self.resampler {
            None => {
                for (channel, out) in self.channels.iter_mut().enumerate() {
                    let input = &planar[channel * frames..(channel + 1) * frames];
                    out.extend(input.iter().map(|s| to_i16(*s)));
                }
                Ok(())
            }
            Some(resampling) => {
                for (channel, pending) in resampling.pending.iter_mut().enumerate() {
                    pending.extend_from_slice(&planar[channel * frames..(channel + 1) * frames]);
                }
                resampling.run(&mut self.channels, false)
            }
        }
    }

    /// Flushes the resampler and trims every channel to the length that `frames` input frames make.
    fn finish(mut self, frames: u64) -> Result<Vec<Vec<i16>>, SpeechError> {
        let expected = match &mut self.resampler {
            None => frames as usize,
            Some(resampling) => {
                let expected = (frames * u64::from(resampling.to))
                    .div_ceil(u64::from(resampling.from)) as usize;
                resampling.run(&mut self.channels, true)?;
                // The resampler holds back its delay's worth of output: feed silence until it is out.
                while self.channels[0].len() < expected {
                    let before = self.channels[0].len();
                    resampling.flush(&mut self.channels)?;
                    if self.channels[0].len() == before {
                        break;
                    }
                }
                expected
            }
        };
        for channel in &mut self.channels {
            channel.resize(expected, 0);
        }
        Ok(self.channels)
    }
}

impl Resampling {
    /// Resamples every whole chunk pending, and with `last` the partial chunk left at the end too.
    fn run(&mut self, out: &mut [Vec<i16>], last: bool) -> Result<(), SpeechError> {
        let mut used = 0;
        loop {
            let need = self.resampler.input_frames_next();
            let available = self.pending[0].len() - used;
            let result = if available >= need {
                let input: Vec<&[f32]> =
                    self.pending.iter().map(|p| &p[used..used + need]).collect();
                used += need;
                self.resampler.process(&input, None)
            } else if last && available > 0 {
                let input: Vec<&[f32]> = self.pending.iter().map(|p| &p[used..]).collect();
                used += available;
                self.resampler.process_partial(Some(&input), None)
            } else {
                break;
            };
            let result = result.map_err(|e| SpeechError::Engine(format!("resampling: {e}")))?;
            self.append(out, &result);
        }
        for pending in &mut self.pending {
            pending.drain(..used);
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut [Vec<i16>]) -> Result<(), SpeechError> {
        let result = self
            .resampler
            .process_partial::<&[f32]>(None, None)
            .map_err(|e| SpeechError::Engine(format!("resampling: {e}")))?;
        self.append(out, &result);
        Ok(())
    }

    fn append(&mut self, out: &mut [Vec<i16>], result: &[Vec<f32>]) {
        let skip = self.skip.min(result[0].len());
        self.skip -= skip;
        for (channel, samples) in out.iter_mut().zip(result) {
            channel.extend(samples[skip..].iter().map(|s| self.dither.quantize(*s)));
        }
    }
}

/// Resamples one channel from `from` to `to` Hz, as uploads are resampled to 16 kHz (for tests that
/// make telephone-rate audio out of 16 kHz recordings).
pub fn resample(samples: &[i16], from: u32, to: u32) -> Result<Vec<i16>, SpeechError> {
    let mut output = Output::new(1, from, to)?;
    let planar: Vec<f32> = samples.iter().map(|s| f32::from(*s) / 32768.0).collect();
    output.push_planar(&planar, 1)?;
    Ok(output.finish(samples.len() as u64)?.remove(0))
}

/// 16 kHz mono samples as a WAV file (16-bit PCM): what the HTTP engine is sent.
pub fn wav_bytes(samples: &[i16]) -> Vec<u8> {
    let data_len = (samples.len() * 2) as u32;
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    out.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes()); // bytes per second
    out.extend_from_slice(&2u16.to_le_bytes()); // bytes per frame
    out.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for sample in samples {
        out.extend_from_slice(&sample.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAV file made with hound, `frames` frames of a 440 Hz tone per channel.
    fn wav(spec: hound::WavSpec, frames: usize) -> Vec<u8> {
        let mut cursor = Cursor::new(Vec::new());
        let mut writer = hound::WavWriter::new(&mut cursor, spec).unwrap();
        for i in 0..frames {
            let x = (i as f64 * 440.0 * std::f64::consts::TAU / f64::from(spec.sample_rate)).sin()
                * 0.5;
            for _ in 0..spec.channels {
                match (spec.sample_format, spec.bits_per_sample) {
                    (hound::SampleFormat::Float, _) => writer.write_sample(x as f32).unwrap(),
                    (_, 8) => writer.write_sample((x * 127.0) as i8).unwrap(),
                    (_, 16) => writer.write_sample((x * 32767.0) as i16).unwrap(),
                    (_, 24) => writer.write_sample((x * 8_388_607.0) as i32).unwrap(),
                    (_, _) => writer.write_sample((x * 2_147_483_647.0) as i32).unwrap(),
                }
            }
        }
        writer.finalize().unwrap();
        cursor.into_inner()
    }

    fn spec(channels: u16, rate: u32, bits: u16, float: bool) -> hound::WavSpec {
        hound::WavSpec {
            channels,
            sample_rate: rate,
            bits_per_sample: bits,
            sample_format: if float {
                hound::SampleFormat::Float
            } else {
                hound::SampleFormat::Int
            },
        }
    }

    #[test]
    fn sixteen_bit_at_16k_is_kept_exactly() {
        let samples: Vec<i16> = (0..16_000)
            .map(|i| ((i * 37) % 65_536 - 32_768) as i16)
            .collect();
        let mut cursor = Cursor::new(Vec::new());
        let mut writer = hound::WavWriter::new(&mut cursor, spec(1, 16_000, 16, false)).unwrap();
        for s in &samples {
            writer.write_sample(*s).unwrap();
        }
        writer.finalize().unwrap();
        let audio = decode(&cursor.into_inner(), Some("x.wav")).unwrap();
        assert_eq!(audio.channels, vec![samples]);
        assert!((audio.seconds - 1.0).abs() < 1e-9);
        // Our own WAV writer gives the same file's samples back too.
        let again = decode(&wav_bytes(&audio.channels[0]), None).unwrap();
        assert_eq!(again, audio);
    }

    #[test]
    fn every_wav_sample_format_and_rate() {
        for (bits, float) in [
            (8, false),
            (16, false),
            (24, false),
            (32, false),
            (32, true),
        ] {
            for rate in [8_000, 11_025, 16_000, 22_050, 44_100, 48_000] {
                for channels in [1, 2] {
                    let frames = rate as usize / 2; // half a second
                    let bytes = wav(spec(channels, rate, bits, float), frames);
                    let audio = decode(&bytes, Some("call.WAV"))
                        .unwrap_or_else(|e| panic!("{bits} bits, {rate} Hz: {e}"));
                    assert_eq!(audio.channels.len(), usize::from(channels));
                    let seconds = frames as f64 / f64::from(rate);
                    assert!((audio.seconds - seconds).abs() < 1e-9, "{}", audio.seconds);
                    let expected = (frames * 16_000).div_ceil(rate as usize);
                    for channel in &audio.channels {
                        assert_eq!(channel.len(), expected, "{bits} bits, {rate} Hz");
                        // The tone's amplitude (0.5 of full scale) survives the conversion: its
                        // peak, away from the edges, is about 16,384.
                        let peak = channel[1000..7000]
                            .iter()
                            .map(|s| s.unsigned_abs())
                            .max()
                            .unwrap();
                        assert!(
                            (15_500..=17_300).contains(&peak),
                            "{bits} bits, {rate} Hz: peak {peak}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn refusals_say_why() {
        let three = wav(spec(3, 16_000, 16, false), 1600);
        let error = decode(&three, Some("x.wav")).unwrap_err();
        assert!(matches!(error, SpeechError::Rejected(_)));
        assert!(error.to_string().contains("3 channels"), "{error}");

        let long = wav(spec(1, 8_000, 16, false), 8_000 * 3);
        let error = decode_with_limit(&long, Some("x.wav"), 2.0).unwrap_err();
        assert!(matches!(error, SpeechError::Rejected(_)));
        assert!(
            error.to_string().contains("longer than 2 seconds"),
            "{error}"
        );
        assert!(decode_with_limit(&long, Some("x.wav"), 3.0).is_ok());

        for garbage in [
            &b"{\"utterances\": []}"[..],
            b"hello, this is not audio at all",
            &[0u8; 4096],
        ] {
            let error = decode(garbage, Some("notes.txt")).unwrap_err();
            assert!(matches!(error, SpeechError::Unsupported(_)), "{error:?}");
            assert!(
                error
                    .to_string()
                    .contains("not audio in a supported format"),
                "{error}"
            );
        }
        assert!(matches!(decode(b"", None), Err(SpeechError::Rejected(_))));
    }

    /// A 44-byte WAV header stating a rate of billions would have the resampler allocate gigabytes (and
    /// a crash takes every worker of the process with it): such rates are refused before decoding.
    #[test]
    fn sample_rates_outside_the_range_are_refused_before_decoding() {
        let with_rate = |rate: u32| {
            let mut bytes = wav_bytes(&[0; 16]);
            bytes[24..28].copy_from_slice(&rate.to_le_bytes());
            bytes[28..32].copy_from_slice(&rate.wrapping_mul(2).to_le_bytes());
            bytes
        };
        for rate in [1, 4_000, 7_999, 192_001, 4_294_967_291] {
            let error = decode(&with_rate(rate), Some("bomb.wav")).unwrap_err();
            assert!(
                matches!(error, SpeechError::Rejected(_)),
                "{rate}: {error:?}"
            );
            assert!(
                error
                    .to_string()
                    .contains(&format!("sample rate is {rate} Hz")),
                "{error}"
            );
        }
        for rate in [8_000, 192_000] {
            assert!(decode(&with_rate(rate), Some("x.wav")).is_ok(), "{rate}");
        }
    }
}
