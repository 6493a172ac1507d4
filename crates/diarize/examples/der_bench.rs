//! The diarization error rate over ten synthetic calls (espeak-ng voices, see tests/common), for
//! docs/benchmarks.md: `cargo run -p diarize --release --example der_bench`.
//! With `DIARIZE_WAV_DIR=dir` the calls are also written there as WAV files to listen to;
//! `DIARIZE_SEED=n` (default 1) draws other sentences and layouts for the same voices;
//! `DIARIZE_RATE=8000` resamples the calls to the telephone band first; `DIARIZE_JOINED=p` has p % of
//! the turns follow the one before with no pause, so that the recognizer's segments hold both speakers.
//!
//! Each call is diarized twice: its segments labelled whole (`diarize`), and with the changes of speaker
//! inside them looked for at the boundaries between their words (`diarize_spans`).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

fn main() {
    if !common::espeak_available("der_bench") {
        return;
    }
    let wav_dir = std::env::var_os("DIARIZE_WAV_DIR").map(std::path::PathBuf::from);
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let seed = env("DIARIZE_SEED", 1);
    let rate = env("DIARIZE_RATE", u64::from(common::RATE)) as u32;
    let joined = env("DIARIZE_JOINED", 0) as f64 / 100.0;
    let (mut error, mut split_error, mut speech, mut audio) = (0.0, 0.0, 0.0, 0.0);
    let (mut seconds, mut split_seconds) = (0.0, 0.0);
    println!("call  voices                                   segments  joined  speech s  DER whole  DER split");
    for (i, &(agent, client)) in common::PAIRS.iter().enumerate() {
        let call =
            common::make_call_joining(agent, client, 10, i as u64 + seed, joined).resampled(rate);
        if let Some(dir) = &wav_dir {
            call.write_wav(&dir.join(format!("call-{i}.wav")));
        }
        let spans = call.spans();
        let segments: Vec<(f64, f64)> = spans.iter().map(|&(s, e, _)| (s, e)).collect();
        let started = Instant::now();
        let labels = diarize::diarize(&call.samples, rate, &segments);
        seconds += started.elapsed().as_secs_f64();
        let whole: Vec<(f64, f64, u8)> = segments
            .iter()
            .zip(&labels)
            .map(|(&(s, e), &l)| (s, e, l))
            .collect();
        let der = diarize::der(&call.reference, &whole);
        let started = Instant::now();
        let turns = diarize::diarize_spans(&call.samples, rate, &common::Call::given(&spans));
        split_seconds += started.elapsed().as_secs_f64();
        let split_der = diarize::der(&call.reference, &call.hypothesis_of_turns(&turns));
        let total: f64 = call.reference.iter().map(|&(s, e, _)| e - s).sum();
        error += der * total;
        split_error += split_der * total;
        speech += total;
        audio += call.samples.len() as f64 / f64::from(rate);
        let voices = format!(
            "{}/{} vs {}/{}",
            agent.name, agent.pitch, client.name, client.pitch
        );
        println!(
            "{i:>4}  {voices:<40} {:>8}  {:>6}  {total:>8.1}  {:>7.1} %  {:>7.1} %",
            call.reference.len(),
            call.reference.len() - spans.len(),
            100.0 * der,
            100.0 * split_der
        );
    }
    println!(
        "overall DER {:.2} % with segments labelled whole, {:.2} % with changes inside them looked for, over {speech:.0} s of speech in {audio:.0} s of audio; diarization took {seconds:.2} s and {split_seconds:.2} s ({:.0}x and {:.0}x real time)",
        100.0 * error / speech,
        100.0 * split_error / speech,
        audio / seconds,
        audio / split_seconds
    );
}
