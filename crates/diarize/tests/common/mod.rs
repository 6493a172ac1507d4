//! Synthetic calls for the diarization tests and the DER bench: two espeak-ng voices taking turns.
//!
//! Each sentence is spoken by `espeak-ng` into a WAV file (read back with hound), resampled from
//! espeak's 22,050 Hz to 16 kHz by a windowed-sinc filter, trimmed of its leading and trailing silence,
//! and placed after a pause; the exact start and end of every sentence is the reference. A turn may be
//! two sentences (two segments of one speaker in a row, as a recognizer splits a turn at a pause), and
//! some turns are a short answer ("Yes.", "Okay."). Faint white noise covers the whole call, as a line's.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Output sample rate of the synthetic calls.
pub const RATE: u32 = 16_000;

/// How long the words of [`Call::spans`] are taken to be: a recognizer's words are about this long.
pub const WORD_SECONDS: f64 = 0.3;

/// One espeak-ng voice: `-v` name, `-p` pitch (0-99), `-s` speed (words per minute).
#[derive(Clone, Copy, Debug)]
pub struct Voice {
    pub name: &'static str,
    pub pitch: u8,
    pub speed: u16,
}

pub const fn voice(name: &'static str, pitch: u8, speed: u16) -> Voice {
    Voice { name, pitch, speed }
}

/// A synthetic call: mono samples and the reference segments (start, end, speaker).
pub struct Call {
    pub rate: u32,
    pub samples: Vec<i16>,
    pub reference: Vec<(f64, f64, u8)>,
}

impl Call {
    /// The segments as the recognizer would give them: the reference's, without labels.
    pub fn segments(&self) -> Vec<(f64, f64)> {
        self.reference.iter().map(|&(s, e, _)| (s, e)).collect()
    }

    /// The segments a recognizer would give, each with the times between its words: reference
    /// segments with no pause between them (turns taken at once, see [`make_call_joining`]) are one,
    /// whose cuts include the exact change of speaker. The words' own boundaries are not known, so every
    /// segment is taken to be words of [`WORD_SECONDS`].
    pub fn spans(&self) -> Vec<(f64, f64, Vec<f64>)> {
        let mut spans: Vec<(f64, f64, Vec<f64>)> = Vec::new();
        for &(start, end, _) in &self.reference {
            let words = ((end - start) / WORD_SECONDS).floor() as usize;
            let cuts = (1..words).map(|k| start + k as f64 * WORD_SECONDS);
            match spans.last_mut() {
                Some(last) if start - last.1 < 0.01 => {
                    last.2.push(start);
                    last.2.extend(cuts);
                    last.1 = end;
                }
                _ => spans.push((start, end, cuts.collect())),
            }
        }
        spans
    }

    /// The spans of [`Self::spans`] as `diarize_spans` takes them, borrowing their cuts.
    pub fn given(spans: &[(f64, f64, Vec<f64>)]) -> Vec<diarize::Span<'_>> {
        spans
            .iter()
            .map(|(start, end, cuts)| diarize::Span {
                start: *start,
                end: *end,
                cuts,
            })
            .collect()
    }

    /// The turns of `turns` (for each span of [`Self::spans`], its turns' starts and labels, as
    /// `diarize_spans` gives them) as labelled stretches of time, each ending where the next of its span
    /// starts or at the span's end.
    pub fn hypothesis_of_turns(&self, turns: &[Vec<(f64, u8)>]) -> Vec<(f64, f64, u8)> {
        let mut labelled = Vec::new();
        for ((_, end, _), turns) in self.spans().iter().zip(turns) {
            for (k, &(start, label)) in turns.iter().enumerate() {
                let until = turns.get(k + 1).map_or(*end, |next| next.0);
                labelled.push((start, until, label));
            }
        }
        labelled
    }

    /// The reference segments with the given labels.
    pub fn hypothesis(&self, labels: &[u8]) -> Vec<(f64, f64, u8)> {
        self.reference
            .iter()
            .zip(labels)
            .map(|(&(s, e, _), &l)| (s, e, l))
            .collect()
    }

    /// The same call at another sample rate.
    pub fn resampled(self, rate: u32) -> Call {
        Call {
            samples: resample(&self.samples, self.rate, rate),
            rate,
            reference: self.reference,
        }
    }

    /// Writes the call as a 16-bit mono WAV file.
    pub fn write_wav(&self, path: &Path) {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: self.rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut writer = hound::WavWriter::create(path, spec).unwrap();
        for &s in &self.samples {
            writer.write_sample(s).unwrap();
        }
        writer.finalize().unwrap();
    }
}

/// Whether espeak-ng can be run; prints why a test is skipped when it cannot.
pub fn espeak_available(test: &str) -> bool {
    let ok = Command::new("espeak-ng")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        println!(
            "SKIPPED {test}: espeak-ng is not installed (scripts/lib.sh ensure_espeak installs it)"
        );
    }
    ok
}

static FILE_COUNTER: AtomicUsize = AtomicUsize::new(0);

fn temp_wav() -> PathBuf {
    let n = FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("diarize-test-{}-{n}.wav", std::process::id()))
}

/// `text` spoken by `voice`, at 16 kHz, without leading or trailing silence.
pub fn speak(voice: Voice, text: &str) -> Vec<i16> {
    let path = temp_wav();
    let status = Command::new("espeak-ng")
        .args([
            "-v",
            voice.name,
            "-p",
            &voice.pitch.to_string(),
            "-s",
            &voice.speed.to_string(),
            "-w",
        ])
        .arg(&path)
        .arg(text)
        .status()
        .expect("espeak-ng runs");
    assert!(status.success(), "espeak-ng failed for {voice:?}");
    let mut reader = hound::WavReader::open(&path).unwrap();
    let rate = reader.spec().sample_rate;
    let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    std::fs::remove_file(&path).ok();
    trim(&resample(&samples, rate, RATE))
}

/// Windowed-sinc resampling (Blackman window, 32 zero crossings each side at the lower of the two
/// Nyquist frequencies, a 0.95 cutoff so little aliases back).
pub fn resample(input: &[i16], from: u32, to: u32) -> Vec<i16> {
    if from == to {
        return input.to_vec();
    }
    let ratio = f64::from(to) / f64::from(from);
    let cutoff = 0.95 * ratio.min(1.0); // in cycles per input sample times 2
    let half = (32.0 / cutoff).ceil() as isize; // input samples either side
    let out_len = (input.len() as f64 * ratio).floor() as usize;
    (0..out_len)
        .map(|n| {
            let x = n as f64 / ratio;
            let centre = x.floor() as isize;
            let mut acc = 0.0;
            for k in centre - half + 1..=centre + half {
                if k < 0 || k as usize >= input.len() {
                    continue;
                }
                let t = x - k as f64;
                let arg = std::f64::consts::PI * cutoff * t;
                let sinc = if arg.abs() < 1e-12 {
                    1.0
                } else {
                    arg.sin() / arg
                };
                let w = t / half as f64; // in (-1, 1)
                let phase = std::f64::consts::PI * (w + 1.0);
                let blackman = 0.42 - 0.5 * phase.cos() + 0.08 * (2.0 * phase).cos();
                acc += f64::from(input[k as usize]) * cutoff * sinc * blackman;
            }
            acc.round().clamp(-32768.0, 32767.0) as i16
        })
        .collect()
}

/// Drops leading and trailing samples quieter than 1 % of full scale over 5 ms.
fn trim(samples: &[i16]) -> Vec<i16> {
    let loud = |i: usize| {
        samples[i..(i + 80).min(samples.len())]
            .iter()
            .any(|s| s.unsigned_abs() > 328)
    };
    let start = (0..samples.len())
        .step_by(40)
        .find(|&i| loud(i))
        .unwrap_or(0);
    let end = (0..samples.len())
        .rev()
        .step_by(40)
        .find(|&i| loud(i.saturating_sub(80)))
        .map_or(samples.len(), |i| i + 1);
    samples[start..end.max(start)].to_vec()
}

/// A small deterministic generator (LCG) for the noise and the call layout.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407))
    }
    pub fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        f64::from(self.next()) / f64::from(1u32 << 31)
    }
}

pub const AGENT_LINES: &[&str] = &[
    "Thank you for calling Northwind customer service, my name is Sam, how can I help you today?",
    "I can certainly look into that for you. Could I have your account number, please?",
    "Thank you. I can see the invoice from last month on your account right now.",
    "It looks like the late fee was added because the payment arrived two days after the due date.",
    "I have removed the late fee as a one time courtesy, so your balance is now correct.",
    "Is there anything else I can help you with while I have your account open?",
    "The new plan includes unlimited calls and ten gigabytes of mobile data every month.",
    "I will send a confirmation email to the address we have on file within the next hour.",
    "Let me transfer you to our technical support team, they will be able to reset the router.",
    "Your order was shipped on Tuesday and should arrive by the end of this week.",
    "I understand your frustration, and I apologise for the inconvenience this has caused.",
    "For security reasons, can you please confirm the first line of your billing address?",
    "The refund has been approved and will appear on your card within five working days.",
    "Thank you for your patience, I really appreciate you holding the line.",
    "You can also manage your subscription online through the customer portal at any time.",
    "Have a wonderful afternoon, and thank you again for choosing Northwind.",
];

pub const CLIENT_LINES: &[&str] = &[
    "Hi, I am calling about my bill, I think I was charged twice this month.",
    "Sure, it is four seven two nine, eight eight one, three zero five.",
    "Yes, that one. I paid it on time, so I do not understand the extra charge.",
    "Oh, I see. The bank must have held the transfer over the weekend.",
    "That is great, thank you so much for sorting it out so quickly.",
    "Actually, yes. I would like to change my plan to something cheaper.",
    "How much would that cost me each month compared to what I pay now?",
    "My internet has been dropping out every evening for about a week.",
    "I already tried switching the router off and on again, it did not help.",
    "When will the replacement part be delivered to my house?",
    "No, I never received any email or letter about that change.",
    "My address is twelve Baker Street, apartment four, near the station.",
    "Could you please cancel the order and refund the money to my card?",
    "Alright, and will I get a reference number for this request?",
    "No, that is everything for today. Thanks for your help, goodbye.",
    "I have been waiting on hold for twenty minutes, this is really annoying.",
];

pub const SHORT_LINES: &[&str] = &["Yes.", "Okay.", "Right.", "Sure.", "No."];

/// A call between `agent` and `client` of `turns` alternating turns (the agent first), built from the
/// sentence lists from offset `seed`. About one turn in four is two sentences (two segments of one
/// speaker in a row) and about one in six a short answer.
pub fn make_call(agent: Voice, client: Voice, turns: usize, seed: u64) -> Call {
    make_call_joining(agent, client, turns, seed, 0.0)
}

/// [`make_call`], but each turn is followed by the next with no pause at all with the chance `joined`,
/// so that a recognizer gives both one segment ([`Call::spans`]). With `joined` 0 the call is
/// [`make_call`]'s, sample for sample.
pub fn make_call_joining(
    agent: Voice,
    client: Voice,
    turns: usize,
    seed: u64,
    joined: f64,
) -> Call {
    let mut rng = Lcg::new(seed);
    let gain = [0.9, 0.6 + 0.4 * rng.unit()];
    let mut samples: Vec<i16> = vec![0; (0.3 * f64::from(RATE)) as usize];
    let mut reference = Vec::new();
    let (mut a, mut c) = (seed as usize, (seed as usize * 3) % CLIENT_LINES.len());
    for turn in 0..turns {
        let speaker = (turn % 2) as u8;
        let voice = if speaker == 0 { agent } else { client };
        let roll = rng.unit();
        let sentences: Vec<&str> = if turn > 0 && roll < 0.17 {
            vec![SHORT_LINES[rng.next() as usize % SHORT_LINES.len()]]
        } else {
            let count = if roll > 0.75 { 2 } else { 1 };
            let (lines, next) = if speaker == 0 {
                (AGENT_LINES, &mut a)
            } else {
                (CLIENT_LINES, &mut c)
            };
            (0..count)
                .map(|_| {
                    *next += 1;
                    lines[(*next - 1) % lines.len()]
                })
                .collect()
        };
        for (k, text) in sentences.iter().enumerate() {
            if k > 0 {
                // A pause within a turn: the recognizer cuts it into two segments.
                samples.extend(std::iter::repeat_n(0, (0.25 * f64::from(RATE)) as usize));
            }
            let speech = speak(voice, text);
            let start = samples.len() as f64 / f64::from(RATE);
            samples.extend(
                speech
                    .iter()
                    .map(|&s| (f64::from(s) * gain[usize::from(speaker)]) as i16),
            );
            let end = samples.len() as f64 / f64::from(RATE);
            reference.push((start, end, speaker));
        }
        let mut pause = 0.2 + 0.5 * rng.unit();
        // Drawn only when asked, so that calls without joined turns stay as they were.
        if joined > 0.0 && rng.unit() < joined {
            pause = 0.0;
        }
        samples.extend(std::iter::repeat_n(0, (pause * f64::from(RATE)) as usize));
    }
    for s in samples.iter_mut() {
        let noise = (rng.unit() - 0.5) * 60.0;
        *s = (f64::from(*s) + noise).round().clamp(-32768.0, 32767.0) as i16;
    }
    Call {
        rate: RATE,
        samples,
        reference,
    }
}

/// The voice pairs of the benchmark calls, agent first: men and women, two men, two women, and one voice
/// at two pitches (the hardest).
pub const PAIRS: &[(Voice, Voice)] = &[
    (voice("en-us+m3", 50, 165), voice("en-gb+f3", 50, 160)),
    (voice("en-gb+m1", 45, 170), voice("en-us+f2", 55, 155)),
    (
        voice("en-us+m7", 40, 160),
        voice("en-gb-scotland+m2", 60, 170),
    ),
    (voice("en-029+f4", 50, 160), voice("en-us+m5", 45, 165)),
    (voice("en-gb+f1", 50, 165), voice("en-us+f5", 40, 160)),
    (voice("en-us+m1", 50, 170), voice("en-gb-x-rp+m4", 50, 160)),
    (voice("en-us-nyc+m6", 45, 165), voice("en-gb+f4", 55, 165)),
    (voice("en-gb+m3", 35, 160), voice("en-gb+m3", 70, 160)),
    (
        voice("en-us+f3", 60, 160),
        voice("en-gb-x-gbclan+m2", 45, 170),
    ),
    (
        voice("en-gb-x-gbcwmd+m7", 50, 165),
        voice("en-us+f1", 50, 160),
    ),
];
