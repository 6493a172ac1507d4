//! A safe binding of the PocketSphinx 5prealpha recognizer as Debian ships it (`libpocketsphinx-dev`,
//! model in `pocketsphinx-en-us`). It exists so that the rest of the workspace can forbid `unsafe`: every
//! C call is made here, behind an API that cannot misuse the decoder.
//!
//! [`Decoder::decode`] runs the loop of `pocketsphinx_continuous -infile` (`recognize_from_file` in
//! `continuous.c`): the audio goes in blocks of 2048 samples through `ps_process_raw` in live mode, and
//! an utterance ends whenever the decoder's voice activity detector leaves speech. Decoding the same
//! samples with the same configuration therefore gives the same hypotheses, and the same word error
//! rate, as the command-line tool.
//!
//! A decoder is reused across recordings (loading the models is the slow part), yet each recording is
//! decoded as by a fresh decoder: `decode` starts a new stream (`ps_start_stream`: the noise estimate of
//! the voice activity detector and the frame count start again, so times are seconds from the first
//! sample) and puts back the cepstral mean normalization as `ps_init` left it. PocketSphinx carries that
//! running mean from one utterance to the next on purpose, and has no call to reset it, so the binding
//! keeps a copy of the initial state (read through the 5prealpha layout of `feat_t` and `cmn_t`, checked
//! against the configuration when the decoder is made). Without the reset, the second recording through
//! a decoder is recognized differently from the first.
//!
//! The SphinxBase log is process-wide state: it is turned off once, before the first decoder, and the
//! construction of decoders (which reopens the log file named by `-logfn`) is serialized.

mod ffi;

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;
use std::ptr::{self, NonNull};
use std::sync::{Mutex, Once};

/// Samples handed to `ps_process_raw` at a time, as `pocketsphinx_continuous` reads them from a file.
/// Utterance boundaries are only looked at between blocks, so this size is part of what makes the
/// hypotheses equal to the tool's.
pub const BLOCK_SAMPLES: usize = 2048;

/// The sample rate the acoustic model of `pocketsphinx-en-us` expects (its `-samprate` default).
pub const SAMPLE_RATE: u32 = 16_000;

/// Where the Debian package `pocketsphinx-en-us` installs the US English model.
pub const DEBIAN_MODEL_DIR: &str = "/usr/share/pocketsphinx/model/en-us";

/// What can go wrong in the binding.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration was refused before the C library saw it.
    #[error("invalid PocketSphinx configuration: {0}")]
    Config(String),
    /// `cmd_ln_parse_r` or `ps_init` failed: a missing model file or an unknown argument. The library's
    /// own message is not available because its log is off.
    #[error("PocketSphinx could not start with acoustic model {hmm}, language model {lm}, dictionary {dict} (a missing file or an unknown argument)")]
    Init {
        hmm: String,
        lm: String,
        dict: String,
    },
    /// A decoding call returned an error code.
    #[error("PocketSphinx failed in {0}")]
    Decode(&'static str),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The model files and any further command-line arguments (`-name value` pairs, as the tool takes them).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The acoustic model directory (`-hmm`).
    pub hmm: PathBuf,
    /// The language model (`-lm`).
    pub lm: PathBuf,
    /// The pronunciation dictionary (`-dict`).
    pub dict: PathBuf,
    /// Other arguments, e.g. `("-beam", "1e-60")`.
    pub extra: Vec<(String, String)>,
}

impl Config {
    /// The three model files under `model_dir`, laid out as `pocketsphinx-en-us` installs them:
    /// `en-us/` (acoustic), `en-us.lm.bin`, `cmudict-en-us.dict`.
    pub fn from_model_dir(model_dir: impl Into<PathBuf>) -> Config {
        let dir: PathBuf = model_dir.into();
        Config {
            hmm: dir.join("en-us"),
            lm: dir.join("en-us.lm.bin"),
            dict: dir.join("cmudict-en-us.dict"),
            extra: Vec::new(),
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::from_model_dir(DEBIAN_MODEL_DIR)
    }
}

/// One recognized word.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// The dictionary word without its pronunciation variant (`read(2)` is `read`).
    pub word: String,
    /// Seconds from the start of the decoded samples to the word's first frame.
    pub start: f64,
    /// Seconds from the start of the decoded samples to the end of the word's last frame.
    pub end: f64,
    /// The word's posterior probability in the lattice, 0 to 1.
    pub confidence: f64,
}

/// One utterance: what the decoder recognized between two pauses.
#[derive(Debug, Clone, PartialEq)]
pub struct Utterance {
    /// The hypothesis as `ps_get_hyp` gives it (what `pocketsphinx_continuous` prints).
    pub hypothesis: String,
    /// Its words with times and confidences, fillers (`<s>`, `<sil>`, `[NOISE]`, ...) left out.
    pub words: Vec<Word>,
}

/// Arguments that would make decoders share mutable process-wide state: dithering seeds and draws
/// from SphinxBase's one global random generator, and the log file is set by the binding itself.
const REFUSED_ARGS: [&str; 3] = ["-dither", "-seed", "-logfn"];

/// Serializes `cmd_ln_parse_r` and `ps_init`: `ps_init` swaps the process-wide log stream
/// (`err_set_logfile` closes the previous one), which two threads must not do at once.
static CONSTRUCTION: Mutex<()> = Mutex::new(());

/// Turns the SphinxBase log off for the whole process, once.
fn silence_log() {
    static SILENCE: Once = Once::new();
    SILENCE.call_once(|| {
        // SAFETY: a null callback is the documented way to disable logging (`err_msg` returns before
        // formatting anything); it runs once, before any decoder exists, so no other thread is
        // reading the callback while it is written.
        unsafe { ffi::err_set_callback(None, ptr::null_mut()) };
    });
}

/// A PocketSphinx decoder with its loaded models. Loading takes a while (about half a second for the
/// US English model), so decoders are meant to be kept and reused.
///
/// A decoder may move to another thread (`Send`) but is never used from two at once (not `Sync`):
/// `decode` takes `&mut self`.
pub struct Decoder {
    ps: NonNull<ffi::PsDecoder>,
    config: NonNull<ffi::CmdLn>,
    /// Frames per second (`-frate`), to turn frame numbers into seconds.
    frame_rate: f64,
    /// Samples per second (`-samprate`), to know how long the decoded samples last.
    sample_rate: f64,
    /// The cepstral mean normalization state right after `ps_init`, put back before every decode.
    initial_cmn: CmnState,
    /// An utterance was started and not ended (a decode that failed half way); the next decode ends it.
    utterance_open: bool,
    /// The argument strings: `cmd_ln_parse_r` keeps pointers to the argument names in its table
    /// instead of copying them, so they live as long as the configuration. Dropped after it.
    _args: Vec<CString>,
}

// SAFETY: the decoder and its configuration are owned by this value alone and PocketSphinx keeps no
// thread-local state, so another thread may use them once this one has let go (moving requires that).
// The process-wide state it touches is handled here: the log is off and its reopening in `ps_init` is
// serialized; the shared random generator is only used with `-dither`, which `Decoder::new` refuses.
// It is not `Sync`: the raw pointers keep the auto trait off, and every call takes `&mut self`.
unsafe impl Send for Decoder {}

impl Decoder {
    /// Loads the models and prepares a decoder. The C library's log goes nowhere (`-logfn /dev/null`).
    pub fn new(config: &Config) -> Result<Decoder> {
        silence_log();
        let mut pairs: Vec<(String, String)> = vec![
            ("-hmm".into(), path_arg(&config.hmm)?),
            ("-lm".into(), path_arg(&config.lm)?),
            ("-dict".into(), path_arg(&config.dict)?),
            ("-logfn".into(), "/dev/null".into()),
        ];
        for (name, value) in &config.extra {
            if !name.starts_with('-') {
                return Err(Error::Config(format!(
                    "argument names start with '-': {name:?}"
                )));
            }
            if REFUSED_ARGS.contains(&name.as_str()) {
                return Err(Error::Config(format!(
                    "{name} is not supported: it makes decoders share process-wide state"
                )));
            }
            pairs.push((name.clone(), value.clone()));
        }
        let mut args = Vec::with_capacity(pairs.len() * 2);
        for (name, value) in pairs {
            for text in [name, value] {
                args.push(
                    CString::new(text).map_err(|_| {
                        Error::Config("an argument contains a NUL character".into())
                    })?,
                );
            }
        }
        let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        let argc =
            i32::try_from(argv.len()).map_err(|_| Error::Config("too many arguments".into()))?;
        let init_error = || Error::Init {
            hmm: config.hmm.display().to_string(),
            lm: config.lm.display().to_string(),
            dict: config.dict.display().to_string(),
        };

        let _serialized = CONSTRUCTION.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: `ps_args()` returns a pointer to a static definition table; `argv` holds `argc`
        // valid NUL-terminated strings (all start with '-' or are values after one, so none is taken
        // for a program name), which the parser only reads; the names it keeps pointers to live in
        // `args`, which the decoder keeps until after `cmd_ln_free_r`. Strict mode refuses unknown
        // names. A null result is an error, handled below.
        let cmdln = unsafe {
            ffi::cmd_ln_parse_r(ptr::null_mut(), ffi::ps_args(), argc, argv.as_mut_ptr(), 1)
        };
        let cmdln = NonNull::new(cmdln).ok_or_else(init_error)?;
        // SAFETY: `cmdln` is the valid configuration just parsed; `ps_init` takes its own reference
        // and leaves ours to us. The construction lock is held (it swaps the process-wide log file).
        let ps = unsafe { ffi::ps_init(cmdln.as_ptr()) };
        let Some(ps) = NonNull::new(ps) else {
            // SAFETY: our reference to the configuration, not used afterwards.
            unsafe { ffi::cmd_ln_free_r(cmdln.as_ptr()) };
            return Err(init_error());
        };
        let frate_name = c"-frate";
        // SAFETY: a valid configuration and a NUL-terminated name that `ps_args` defines (an integer),
        // so the lookup cannot fail.
        let frate = unsafe { ffi::cmd_ln_int_r(cmdln.as_ptr(), frate_name.as_ptr()) };
        let samprate_name = c"-samprate";
        // SAFETY: a valid configuration and a NUL-terminated name that `ps_args` defines (a float).
        let samprate = unsafe { ffi::cmd_ln_float_r(cmdln.as_ptr(), samprate_name.as_ptr()) };
        let ceplen_name = c"-ceplen";
        // SAFETY: as for `-frate`: a valid configuration and an integer argument `ps_args` defines.
        let ceplen = unsafe { ffi::cmd_ln_int_r(cmdln.as_ptr(), ceplen_name.as_ptr()) };
        drop(_serialized);
        let mut decoder = Decoder {
            ps,
            config: cmdln,
            frame_rate: frate as f64,
            sample_rate: samprate,
            initial_cmn: CmnState::default(),
            utterance_open: false,
            _args: args,
        };
        if decoder.frame_rate <= 0.0 {
            return Err(Error::Config(format!(
                "-frate must be positive, not {frate}"
            )));
        }
        decoder.initial_cmn = decoder.read_cmn(ceplen)?;
        Ok(decoder)
    }

    /// Recognizes 16 kHz mono samples (see [`SAMPLE_RATE`]) the way `pocketsphinx_continuous -infile`
    /// does, and returns the utterances that have words, in order. Times are seconds from the first
    /// sample.
    pub fn decode(&mut self, samples: &[i16]) -> Result<Vec<Utterance>> {
        if self.utterance_open {
            // SAFETY: a valid decoder with an utterance left open by a failed decode.
            unsafe { ffi::ps_end_utt(self.ps.as_ptr()) };
            self.utterance_open = false;
        }
        // SAFETY: a valid decoder between utterances; the call resets stream-wide state only.
        if unsafe { ffi::ps_start_stream(self.ps.as_ptr()) } < 0 {
            return Err(Error::Decode("ps_start_stream"));
        }
        self.write_cmn();
        let mut utterances = Vec::new();
        let duration = samples.len() as f64 / self.sample_rate;
        self.start_utterance()?;
        let mut in_utterance = false;
        for block in samples.chunks(BLOCK_SAMPLES) {
            // SAFETY: a valid decoder inside an utterance; `block` is a live slice of `block.len()`
            // samples that the call only reads. No search is skipped and the block is not a whole
            // utterance (live mode, as the tool runs it).
            let frames =
                unsafe { ffi::ps_process_raw(self.ps.as_ptr(), block.as_ptr(), block.len(), 0, 0) };
            if frames < 0 {
                return Err(Error::Decode("ps_process_raw"));
            }
            // SAFETY: a valid decoder; the call only reads its voice activity state.
            let in_speech = unsafe { ffi::ps_get_in_speech(self.ps.as_ptr()) } != 0;
            if in_speech && !in_utterance {
                in_utterance = true;
            }
            if !in_speech && in_utterance {
                self.end_utterance()?;
                self.collect(&mut utterances, duration);
                self.start_utterance()?;
                in_utterance = false;
            }
        }
        self.end_utterance()?;
        if in_utterance {
            self.collect(&mut utterances, duration);
        }
        Ok(utterances)
    }

    /// The decoder's cepstral mean normalization state, checked against the configured cepstrum length
    /// (`-ceplen`) so that a library whose structures differ from the 5prealpha ones is refused
    /// instead of misread.
    fn read_cmn(&mut self, ceplen: std::ffi::c_long) -> Result<CmnState> {
        let layout_error = || {
            Error::Config(format!(
                "the PocketSphinx library's feature structures are not those of 5prealpha \
                 (expected a cepstrum of {ceplen} values)"
            ))
        };
        // SAFETY: a valid decoder; `ps_get_feat` returns its feature computation object, owned by the
        // decoder and alive as long as it is, whose leading fields `FeatPrefix` declares in the order
        // and types of the installed `feat.h`. Only reads; `cmn_struct` is checked before use.
        let (cepsize, cmn) = unsafe {
            let feat = ffi::ps_get_feat(self.ps.as_ptr());
            if feat.is_null() {
                return Err(layout_error());
            }
            ((*feat).cepsize, (*feat).cmn_struct)
        };
        if cmn.is_null() || std::ffi::c_long::from(cepsize) != ceplen {
            return Err(layout_error());
        }
        // SAFETY: `cmn` is the decoder's live `cmn_t` (non-null, owned by the feature object); its
        // three vectors hold `veclen` floats each (`cmn_init` allocates them so), and `veclen` is
        // checked to be the cepstrum length before any of them is read.
        unsafe {
            let cmn = &*cmn;
            if std::ffi::c_long::from(cmn.veclen) != ceplen
                || cmn.cmn_mean.is_null()
                || cmn.cmn_var.is_null()
                || cmn.sum.is_null()
            {
                return Err(layout_error());
            }
            let n = cmn.veclen as usize;
            Ok(CmnState {
                mean: std::slice::from_raw_parts(cmn.cmn_mean, n).to_vec(),
                var: std::slice::from_raw_parts(cmn.cmn_var, n).to_vec(),
                sum: std::slice::from_raw_parts(cmn.sum, n).to_vec(),
                nframe: cmn.nframe,
            })
        }
    }

    /// Puts the cepstral mean normalization back as it was after `ps_init`.
    fn write_cmn(&mut self) {
        // SAFETY: a valid decoder between utterances (nothing else reads the state now); `read_cmn`
        // checked at construction that the feature object and its `cmn_t` exist and that `veclen`
        // equals the length of the saved vectors; neither changes during the decoder's life.
        unsafe {
            let cmn = &mut *(*ffi::ps_get_feat(self.ps.as_ptr())).cmn_struct;
            let n = self.initial_cmn.mean.len();
            std::slice::from_raw_parts_mut(cmn.cmn_mean, n).copy_from_slice(&self.initial_cmn.mean);
            std::slice::from_raw_parts_mut(cmn.cmn_var, n).copy_from_slice(&self.initial_cmn.var);
            std::slice::from_raw_parts_mut(cmn.sum, n).copy_from_slice(&self.initial_cmn.sum);
            cmn.nframe = self.initial_cmn.nframe;
        }
    }

    fn start_utterance(&mut self) -> Result<()> {
        // SAFETY: a valid decoder with no utterance open (`utterance_open` tracks it).
        if unsafe { ffi::ps_start_utt(self.ps.as_ptr()) } < 0 {
            return Err(Error::Decode("ps_start_utt"));
        }
        self.utterance_open = true;
        Ok(())
    }

    fn end_utterance(&mut self) -> Result<()> {
        // SAFETY: a valid decoder with an utterance open.
        let status = unsafe { ffi::ps_end_utt(self.ps.as_ptr()) };
        self.utterance_open = false;
        if status < 0 {
            return Err(Error::Decode("ps_end_utt"));
        }
        Ok(())
    }

    /// Reads the hypothesis and the words of the utterance just ended and keeps it if it has words.
    /// `duration` is the length of the samples decoded: the last frame, padded out of the samples
    /// left over, may reach past it by a few milliseconds, and no time is given beyond it.
    fn collect(&mut self, utterances: &mut Vec<Utterance>, duration: f64) {
        let ps = self.ps.as_ptr();
        // SAFETY: a valid decoder after `ps_end_utt`; the returned string (or null) is owned by the
        // decoder and valid until the next decoding call, and is copied at once.
        let hypothesis = unsafe {
            let hyp = ffi::ps_get_hyp(ps, ptr::null_mut());
            if hyp.is_null() {
                String::new()
            } else {
                CStr::from_ptr(hyp).to_string_lossy().into_owned()
            }
        };
        // SAFETY: a valid decoder; the log-math object belongs to it and lives as long as it does.
        let logmath = unsafe { ffi::ps_get_logmath(ps) };
        let mut words = Vec::new();
        // SAFETY: a valid decoder after `ps_end_utt`; the iterator (or null when there is no
        // hypothesis) is ours until `ps_seg_next` returns null, which frees it.
        let mut seg = unsafe { ffi::ps_seg_iter(ps) };
        while !seg.is_null() {
            let (mut sf, mut ef): (c_int, c_int) = (0, 0);
            // SAFETY: `seg` is a live iterator; the word string belongs to it and is copied before
            // `ps_seg_next`; the out-pointers are to locals and the unwanted scores may be null;
            // `logmath` is the decoder's.
            let (word, prob) = unsafe {
                let word = CStr::from_ptr(ffi::ps_seg_word(seg))
                    .to_string_lossy()
                    .into_owned();
                ffi::ps_seg_frames(seg, &mut sf, &mut ef);
                let log_prob =
                    ffi::ps_seg_prob(seg, ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
                (word, ffi::logmath_exp(logmath, log_prob))
            };
            if let Some(word) = spoken_word(&word) {
                words.push(Word {
                    word: word.to_owned(),
                    start: (f64::from(sf) / self.frame_rate).min(duration),
                    end: (f64::from(ef + 1) / self.frame_rate).min(duration),
                    confidence: if prob.is_finite() {
                        prob.clamp(0.0, 1.0)
                    } else {
                        0.0
                    },
                });
            }
            // SAFETY: `seg` is live; the call advances it, or frees it and returns null at the end.
            seg = unsafe { ffi::ps_seg_next(seg) };
        }
        if !words.is_empty() {
            utterances.push(Utterance { hypothesis, words });
        }
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        if self.utterance_open {
            // SAFETY: a valid decoder with an utterance open; ending it before freeing is tidy, not
            // required, and its status does not matter here.
            unsafe { ffi::ps_end_utt(self.ps.as_ptr()) };
        }
        // SAFETY: the decoder and our reference to its configuration are valid and freed exactly once,
        // here; nothing uses them afterwards. The argument strings the configuration points into are
        // dropped after this function returns.
        unsafe {
            ffi::ps_free(self.ps.as_ptr());
            ffi::cmd_ln_free_r(self.config.as_ptr());
        }
    }
}

/// A copy of SphinxBase's `cmn_t` values.
#[derive(Debug, Clone, Default)]
struct CmnState {
    mean: Vec<f32>,
    var: Vec<f32>,
    sum: Vec<f32>,
    nframe: i32,
}

/// A model path as a C argument string.
fn path_arg(path: &std::path::Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::Config(format!("model path is not UTF-8: {}", path.display())))
}

/// The spoken word of a segment: `None` for fillers (`<s>`, `</s>`, `<sil>`, `[NOISE]`, `+SPN+`), the
/// word without its pronunciation variant (`word(2)` → `word`) otherwise.
pub fn spoken_word(segment_word: &str) -> Option<&str> {
    if segment_word.is_empty() || segment_word.starts_with(['<', '[', '+']) {
        return None;
    }
    let word = match segment_word.rfind('(') {
        Some(open)
            if segment_word.ends_with(')')
                && segment_word[open + 1..segment_word.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_digit()) =>
        {
            &segment_word[..open]
        }
        _ => segment_word,
    };
    (!word.is_empty()).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIPS: &str = "/usr/share/pocketsphinx/test/data/librivox";

    fn read_clip(name: &str) -> Vec<i16> {
        let path = format!("{CLIPS}/{name}.wav");
        let mut reader = hound::WavReader::open(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (install pocketsphinx-testdata)"));
        assert_eq!(reader.spec().sample_rate, SAMPLE_RATE);
        assert_eq!(reader.spec().channels, 1);
        reader.samples::<i16>().map(|s| s.unwrap()).collect()
    }

    #[test]
    fn fillers_and_variants() {
        assert_eq!(spoken_word("<s>"), None);
        assert_eq!(spoken_word("</s>"), None);
        assert_eq!(spoken_word("<sil>"), None);
        assert_eq!(spoken_word("[NOISE]"), None);
        assert_eq!(spoken_word("+SPN+"), None);
        assert_eq!(spoken_word("read(2)"), Some("read"));
        assert_eq!(spoken_word("read(12)"), Some("read"));
        assert_eq!(spoken_word("read"), Some("read"));
        assert_eq!(spoken_word("(x)"), Some("(x)"));
    }

    #[test]
    fn decodes_a_librivox_clip() {
        let samples = read_clip("sense_and_sensibility_01_austen_64kb-0880");
        let seconds = samples.len() as f64 / f64::from(SAMPLE_RATE);
        let mut decoder = Decoder::new(&Config::default()).unwrap();
        let utterances = decoder.decode(&samples).unwrap();
        assert!(!utterances.is_empty());
        let words: Vec<&Word> = utterances.iter().flat_map(|u| &u.words).collect();
        let text: Vec<&str> = words.iter().map(|w| w.word.as_str()).collect();
        // Reference: "he was not an ill disposed young man"; the model hears most of it.
        for expected in ["he", "was", "not", "young", "man"] {
            assert!(text.contains(&expected), "{expected} missing from {text:?}");
        }
        // The words are the hypothesis's, without fillers.
        let hypothesis: Vec<&str> = utterances
            .iter()
            .flat_map(|u| u.hypothesis.split_whitespace())
            .collect();
        assert_eq!(text, hypothesis);
        let mut previous_end = 0.0;
        for word in &words {
            assert!(word.start >= previous_end - 1e-9, "{words:?}");
            assert!(
                word.end > word.start && word.end <= seconds + 1e-9,
                "{word:?}"
            );
            assert!((0.0..=1.0).contains(&word.confidence), "{word:?}");
            previous_end = word.end;
        }

        // A decoder is reused: the same samples give the same result.
        assert_eq!(decoder.decode(&samples).unwrap(), utterances);
        // Silence has no utterance, and nothing at all neither.
        assert!(decoder.decode(&vec![0; 16_000]).unwrap().is_empty());
        assert!(decoder.decode(&[]).unwrap().is_empty());
    }

    #[test]
    fn moves_to_another_thread() {
        let samples = read_clip("sense_and_sensibility_01_austen_64kb-0930");
        let mut decoder = Decoder::new(&Config::default()).unwrap();
        let here = decoder.decode(&samples).unwrap();
        let there = std::thread::spawn(move || decoder.decode(&samples).unwrap())
            .join()
            .unwrap();
        assert_eq!(here, there);
    }

    #[test]
    fn refuses_bad_configurations() {
        let missing = Config::from_model_dir("/nonexistent");
        assert!(matches!(Decoder::new(&missing), Err(Error::Init { .. })));
        let mut dither = Config::default();
        dither.extra.push(("-dither".into(), "yes".into()));
        assert!(matches!(Decoder::new(&dither), Err(Error::Config(_))));
        let mut unknown = Config::default();
        unknown.extra.push(("-no-such-thing".into(), "1".into()));
        assert!(matches!(Decoder::new(&unknown), Err(Error::Init { .. })));
    }
}
