//! The diarization error rate over ten synthetic calls (espeak-ng voices, see tests/common), for
//! docs/benchmarks.md: `cargo run -p diarize --release --example der_bench`.
//! With `DIARIZE_WAV_DIR=dir` the calls are also written there as WAV files to listen to;
//! `DIARIZE_SEED=n` (default 1) draws other sentences and layouts for the same voices;
//! `DIARIZE_RATE=8000` resamples the calls to the telephone band first.

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
    let (mut error, mut speech, mut audio, mut seconds) = (0.0, 0.0, 0.0, 0.0);
    println!("call  voices                                   segments  wrong  speech s  DER");
    for (i, &(agent, client)) in common::PAIRS.iter().enumerate() {
        let call = common::make_call(agent, client, 10, i as u64 + seed).resampled(rate);
        if let Some(dir) = &wav_dir {
            call.write_wav(&dir.join(format!("call-{i}.wav")));
        }
        let started = Instant::now();
        let labels = diarize::diarize(&call.samples, rate, &call.segments());
        seconds += started.elapsed().as_secs_f64();
        let der = diarize::der(&call.reference, &call.hypothesis(&labels));
        // Segments on the wrong side under the better of the two label mappings.
        let wrong = |swap: u8| {
            call.reference
                .iter()
                .zip(&labels)
                .filter(|(r, &l)| r.2 != l ^ swap)
                .count()
        };
        let wrong = wrong(0).min(wrong(1));
        let total: f64 = call.reference.iter().map(|&(s, e, _)| e - s).sum();
        error += der * total;
        speech += total;
        audio += call.samples.len() as f64 / f64::from(rate);
        let voices = format!(
            "{}/{} vs {}/{}",
            agent.name, agent.pitch, client.name, client.pitch
        );
        println!(
            "{i:>4}  {voices:<40} {:>8}  {wrong:>5}  {total:>8.1}  {:.1} %",
            call.reference.len(),
            100.0 * der
        );
    }
    println!(
        "overall DER {:.2} % over {speech:.0} s of speech in {audio:.0} s of audio; diarization took {seconds:.2} s ({:.0}x real time)",
        100.0 * error / speech,
        audio / seconds
    );
}
