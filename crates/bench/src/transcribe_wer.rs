//! `transcribe-wer [clips-dir]`: the recognizer benchmark of `scripts/bench transcribe`. It recognizes
//! every clip of a Sphinx test set (default: the LibriVox clips of `pocketsphinx-testdata`, listed with
//! their reference in `transcription`) with the service's PocketSphinx adapter, and the same files with
//! `pocketsphinx_continuous -infile`, the tool the adapter's decoding loop follows, and prints a Markdown
//! table of both: word error rate (the same scoring for both, `speech::wer`) and real-time factor
//! (processing seconds / audio seconds, the median of `TRANSCRIBE_RUNS` runs, 3 by default).
//! `TRANSCRIBE_CLIPS=n` keeps the first n clips of the set (the smoke run of `scripts/bench`).
//!
//! The adapter runs with one decoder, already made (a warm-up pass comes first), and its time includes
//! reading and decoding each WAV file; the tool is started once per file, as it is used, so its time
//! includes loading the models each time. How long that start-up takes is measured on a tenth of a
//! second of silence and shown too, with the tool's factor less it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use speech::audio;
use speech::sphinx::SphinxEngine;
use speech::wer::word_errors;
use speech::Transcriber;

const CLIPS: &str = "/usr/share/pocketsphinx/test/data/librivox";

struct Clip {
    path: PathBuf,
    reference: String,
    wav: Vec<u8>,
    seconds: f64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| CLIPS.into()));
    let runs: usize = std::env::var("TRANSCRIBE_RUNS")
        .ok()
        .map(|r| r.parse())
        .transpose()?
        .unwrap_or(3)
        .max(1);
    let model = PathBuf::from(
        std::env::var("SPEECH_ASR_MODEL_DIR")
            .unwrap_or_else(|_| pocketsphinx::DEBIAN_MODEL_DIR.into()),
    );
    let mut clips = read_clips(&dir)?;
    if let Ok(keep) = std::env::var("TRANSCRIBE_CLIPS") {
        clips.truncate(keep.parse::<usize>()?.max(1));
    }
    let audio_seconds: f64 = clips.iter().map(|c| c.seconds).sum();
    let config = pocketsphinx::Config::from_model_dir(&model);
    let engine = SphinxEngine::new(config.clone(), 1);

    // Warm-up: the decoder is made, the files are in the page cache, the tool's binary and models too.
    engine_pass(&engine, &clips).await?;
    cli_pass(&config, &clips)?;

    // The two alternate, so that a change in the machine's load falls on both.
    let (mut engine_times, mut cli_times, mut startup_times) = (vec![], vec![], vec![]);
    let (mut engine_hyps, mut cli_hyps) = (vec![], vec![]);
    let silence = std::env::temp_dir().join(format!("transcribe-wer-{}.wav", std::process::id()));
    std::fs::write(&silence, audio::wav_bytes(&[0; 1600]))?;
    for _ in 0..runs {
        let start = Instant::now();
        engine_hyps = engine_pass(&engine, &clips).await?;
        engine_times.push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        cli_hyps = cli_pass(&config, &clips)?;
        cli_times.push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        run_cli(&config, &silence)?;
        startup_times.push(start.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_file(&silence);

    let engine_wer = corpus_wer(&clips, &engine_hyps);
    let cli_wer = corpus_wer(&clips, &cli_hyps);
    let same = engine_hyps
        .iter()
        .zip(&cli_hyps)
        .filter(|(a, b)| speech::wer::normalize(a) == speech::wer::normalize(b))
        .count();
    let engine_rtf = median(&mut engine_times) / audio_seconds;
    let cli_rtf = median(&mut cli_times) / audio_seconds;
    let startup = median(&mut startup_times);
    let cli_decode_rtf =
        (median(&mut cli_times) - startup * clips.len() as f64).max(0.0) / audio_seconds;

    println!(
        "Recognition of {} clips ({audio_seconds:.1} s of 16 kHz speech, {}), median of {runs} runs, on {} cores; \
         the two hypotheses agree word for word on {same} of {} clips.",
        clips.len(),
        dir.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        clips.len()
    );
    println!();
    println!("| what | WER | RTF (processing s / audio s) | RTF ratio to the tool |");
    println!("|---|---|---|---|");
    println!(
        "| pocketsphinx_continuous -infile, one process per clip (baseline) | {cli_wer:.3} | {cli_rtf:.3} | 1.00 |"
    );
    println!(
        "| the same less its start-up ({startup:.2} s per process, models loaded) | {cli_wer:.3} | {cli_decode_rtf:.3} | {:.2} |",
        cli_decode_rtf / cli_rtf
    );
    println!(
        "| speech::sphinx::SphinxEngine, one warm decoder, WAV decoding included | {engine_wer:.3} | {engine_rtf:.3} | {:.2} |",
        engine_rtf / cli_rtf
    );
    if engine_wer > cli_wer + 1e-9 {
        bail!("the adapter's WER {engine_wer:.3} is worse than the tool's {cli_wer:.3}");
    }
    Ok(())
}

fn read_clips(dir: &Path) -> anyhow::Result<Vec<Clip>> {
    let transcription = dir.join("transcription");
    let text = std::fs::read_to_string(&transcription).with_context(|| {
        format!(
            "{} (the LibriVox clips: Debian package pocketsphinx-testdata)",
            transcription.display()
        )
    })?;
    let mut clips = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((reference, id)) = line.rsplit_once('(') else {
            bail!("{}: no (utterance-id) in {line:?}", transcription.display());
        };
        let path = dir.join(format!("{}.wav", id.trim().trim_end_matches(')')));
        let wav = std::fs::read(&path).with_context(|| path.display().to_string())?;
        let decoded = audio::decode(&wav, Some("clip.wav"))?;
        clips.push(Clip {
            path,
            reference: reference.to_owned(),
            wav,
            seconds: decoded.seconds,
        });
    }
    if clips.is_empty() {
        bail!("{} lists no clips", transcription.display());
    }
    Ok(clips)
}

/// Every clip through the adapter, from the WAV bytes: the hypothesis of each.
async fn engine_pass(engine: &SphinxEngine, clips: &[Clip]) -> anyhow::Result<Vec<String>> {
    let mut hypotheses = Vec::with_capacity(clips.len());
    for clip in clips {
        let decoded = audio::decode(&clip.wav, Some("clip.wav"))?;
        let samples: Arc<[i16]> = Arc::from(decoded.channels[0].as_slice());
        let segments = engine.recognize(samples).await?;
        let words: Vec<&str> = segments
            .iter()
            .flat_map(|s| s.words.iter().map(|w| w.word.as_str()))
            .collect();
        hypotheses.push(words.join(" "));
    }
    Ok(hypotheses)
}

/// Every clip through the tool, one process each: the hypothesis of each (its output lines).
fn cli_pass(config: &pocketsphinx::Config, clips: &[Clip]) -> anyhow::Result<Vec<String>> {
    clips
        .iter()
        .map(|clip| run_cli(config, &clip.path))
        .collect()
}

fn run_cli(config: &pocketsphinx::Config, wav: &Path) -> anyhow::Result<String> {
    let output = Command::new("pocketsphinx_continuous")
        .arg("-infile")
        .arg(wav)
        .arg("-hmm")
        .arg(&config.hmm)
        .arg("-lm")
        .arg(&config.lm)
        .arg("-dict")
        .arg(&config.dict)
        .args(["-logfn", "/dev/null"])
        .output()
        .context("pocketsphinx_continuous (Debian package pocketsphinx)")?;
    if !output.status.success() {
        bail!(
            "pocketsphinx_continuous failed on {}: {}",
            wav.display(),
            output.status
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" "))
}

fn corpus_wer(clips: &[Clip], hypotheses: &[String]) -> f64 {
    let (errors, words) = clips
        .iter()
        .zip(hypotheses)
        .map(|(clip, hyp)| word_errors(&clip.reference, hyp))
        .fold((0, 0), |(e, n), (de, dn)| (e + de, n + dn));
    errors as f64 / words.max(1) as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
