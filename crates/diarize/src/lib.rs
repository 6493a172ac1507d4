//! Two-speaker diarization of mono call audio: which of the two people on a call spoke each segment.
//!
//! Stereo calls carry one speaker per channel. A mono call transcribed with `diarize=true` has both on
//! one channel, and the recognizer gives only utterance segments (start and end in seconds); [`diarize`]
//! labels each segment 0 or 1, and [`diarize_spans`] also cuts a segment where the other speaker took
//! over without a pause. **Label 0 is the speaker of the first segment**, who on a contact-centre
//! call is the agent (the agent answers the call), and label 1 the client.
//!
//! # Method
//!
//! (docs/transcription.md, "Diarization", says more, with the measurements behind the choices.)
//!
//! 1. Frame features (`features.rs`): 19 MFCCs (c1–c19 of 40 log mel filterbank energies, 25 ms Hamming
//!    windows every 10 ms, by real FFT), the log energy, and the pitch (`pitch.rs`, autocorrelation
//!    method, 60–400 Hz).
//! 2. Per-segment embeddings (`embed.rs`): over the segment's speech frames (within 30 dB of its
//!    loudest), the mean and standard deviation of each call-normalised MFCC and the mean log pitch of
//!    the voiced frames; then standardised across the call's segments.
//! 3. Two-cluster k-means over cosine distance (`cluster.rs`), started from the two most distant
//!    embeddings, segments weighted by their speech frames.
//! 4. One speaker or two (`single.rs`): the split is kept only if two Gaussians fit the two clusters'
//!    frames enough better than one; otherwise every segment is speaker 0.
//! 5. Segments shorter than 0.3 s (`short.rs`) take the label of the nearest clustered segment in time.
//! 6. Labels are renamed so the first segment's is 0.
//! 7. With [`diarize_spans`], which is also given the times between each segment's words, changes of
//!    speaker inside a segment (`change.rs`): the two voices learnt from the labelled segments, each word
//!    scored by which explains it better, and the most likely sequence of speakers over the words, a
//!    change costing a fixed price.
//!
//! [`der`] measures the result: the diarization error rate, missed speech + false alarm + speaker
//! confusion over the reference speech, under the better of the two label mappings, no collar.
//!
//! ```
//! // Two "speakers": a low and a high tone, in turns.
//! let rate = 16_000;
//! let tone = |hz: f64, seconds: f64| -> Vec<i16> {
//!     (0..(seconds * rate as f64) as usize)
//!         .map(|i| (6000.0 * (2.0 * std::f64::consts::PI * hz * i as f64 / rate as f64).sin()) as i16)
//!         .collect()
//! };
//! let mut samples = Vec::new();
//! let mut segments = Vec::new();
//! for hz in [150.0, 250.0, 150.0, 250.0] {
//!     let start = samples.len() as f64 / rate as f64;
//!     samples.extend(tone(hz, 1.0));
//!     segments.push((start, start + 1.0));
//!     samples.extend(vec![0; rate as usize / 4]);
//! }
//! assert_eq!(diarize::diarize(&samples, rate, &segments), vec![0, 1, 0, 1]);
//! ```

mod change;
mod cluster;
mod der;
mod embed;
mod features;
mod pipeline;
mod pitch;
mod short;
mod single;

pub use der::{der, der_with_collar, Turn};
pub use pipeline::{diarize, diarize_spans, Span};
