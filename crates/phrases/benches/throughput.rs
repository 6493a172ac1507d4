//! Matching throughput of the compiled matcher, in MB of transcript text per second on one core, beside
//! the naive way measured in the same run: the reference matcher, every phrase against every turn
//! (docs/benchmarks.md). Run by `scripts/bench phrases`; never by the tests.
//!
//! The phrase set and the calls are generated from a fixed seed, so every run scans the same input: a
//! vocabulary whose word frequencies follow a Zipf law (real words of a contact centre first, then made-up
//! ones), scripted lines that agents and clients repeat ("thank you for calling"), turns of 5 to 40 timed
//! words, and phrases mixing every operator of the language, many of them taken from those lines so that
//! they match about as often as real ones.
//!
//! The compiled matcher scans all the calls in each run with one scanner, warmed up on a tenth of them
//! first, as a worker keeps one (an application keeps its scanners' states from call to call); the figure
//! is the median run. Each call is copied just before it is scanned, and only the scan is timed: the
//! service scans a transcript it has just read into memory, so its words are in the cache, where calls
//! generated long before (50 MB of text are 600 MB of turns and words) are read from main memory. That
//! figure is printed too, for the matcher as built ("calls not in the cache"). The matcher is measured as
//! built, then retuned to the patterns a scanner met in that tenth (`Matcher::retuned`), as an
//! application is after its first calls; both must find the same hits. Beside them, a new scanner for
//! every call, which learns every word of each call anew. The naive way scans only the first calls (200
//! KB: at a few KB/s it takes half a minute), and both must find the same hits there, or the bench fails.
//! And the peer one would reach for first, measured the same way: `aho-corasick` finding the phrases'
//! literal word sequences in the same turns (both of its fast automata). It does less than the language
//! asks (no wildcards, operators, speakers, times or word boundaries), so its figure is a floor of what
//! the work costs; an optimized build of the bench fails when the retuned matcher is not at least
//! `PEER_RATIO` (1.5) times as fast as the faster of the two.
//! Times are the thread's time on the CPU, read around each scan, so that the figures hold on a machine
//! shared with other work; the wall-clock figures are printed beside them.
//!
//! Environment: `PHRASES_BENCH_PHRASES` (10,000), `PHRASES_BENCH_MB` (the text scanned per run, 50),
//! `PHRASES_BENCH_RUNS` (5), `PHRASES_BENCH_NAIVE_KB` (the text the naive way scans, 200).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use rustix::time::{clock_gettime, ClockId};

use phrases::{reference, Hit, MatcherBuilder, Phrase, Speaker, TimedWord, Turn};

/// How many times as fast as `aho-corasick` on the literal word sequences the retuned matcher must be, in
/// an optimized build.
const PEER_RATIO: f64 = 1.5;

fn main() {
    let phrase_count = setting("PHRASES_BENCH_PHRASES", 10_000);
    let megabytes = setting("PHRASES_BENCH_MB", 50);
    let runs = setting("PHRASES_BENCH_RUNS", 5).max(1);
    let naive_kb = setting("PHRASES_BENCH_NAIVE_KB", 200);

    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    let language = Language::new(&mut rng);
    let mut literals = HashSet::new();
    let phrases: Vec<(u32, Phrase, Option<Speaker>)> = (0..phrase_count)
        .map(|id| {
            let (text, speaker) = language.phrase(&mut rng);
            literals.extend(literal_sequences(&text));
            match Phrase::parse(&text) {
                Ok(phrase) => (id as u32, phrase, speaker),
                Err(e) => panic!("the generator made an invalid phrase: {e}"),
            }
        })
        .collect();
    let mut literals: Vec<String> = literals.into_iter().collect();
    literals.sort();
    let mut calls = Vec::new();
    let mut bytes = 0;
    while bytes < megabytes * 1_000_000 {
        let call = language.call(&mut rng);
        bytes += call.bytes;
        calls.push(call);
    }
    let turns: usize = calls.iter().map(|c| c.turns.len()).sum();
    eprintln!(
        "{} phrases, {} calls, {turns} turns, {:.1} MB of text",
        phrases.len(),
        calls.len(),
        bytes as f64 / 1e6
    );

    let started = Instant::now();
    let mut builder = MatcherBuilder::new();
    for (id, phrase, speaker) in &phrases {
        builder.add(*id, phrase.clone(), *speaker);
    }
    let matcher = builder.build().unwrap();
    eprintln!(
        "compiled in {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    // The matcher as built, then retuned to the patterns its scanner met in the warm-up.
    let (built, built_wall, hit_count) =
        measure(&matcher, &calls, bytes, runs, Calls::Copied, "as built");
    let (cold, cold_wall, cold_hits) = measure(
        &matcher,
        &calls,
        bytes,
        runs,
        Calls::Generated,
        "as built, calls not in the cache",
    );
    assert_eq!(cold_hits, hit_count, "the same calls gave other hits");
    let retuned = {
        let mut scanner = matcher.scanner();
        for call in &calls[..calls.len() / 10] {
            std::hint::black_box(scanner.scan(&call.turns, call.duration));
        }
        matcher.retuned(&scanner.observed())
    };
    let (compiled, compiled_wall, retuned_hits) =
        measure(&retuned, &calls, bytes, runs, Calls::Copied, "retuned");
    assert_eq!(
        retuned_hits, hit_count,
        "the retuned matcher found other hits"
    );
    // A new scanner for every call, which learns every word of the call anew: what keeping a
    // scanner's state from one call to the next saves.
    let (fresh, fresh_wall, fresh_hits) = timed_runs(
        runs,
        bytes,
        &calls,
        Calls::Copied,
        "a new scanner per call",
        |turns, duration, _| matcher.scan(turns, duration).len(),
    );
    assert_eq!(
        fresh_hits, hit_count,
        "a new scanner per call found other hits"
    );

    // The peer: aho-corasick's two fast automata, every occurrence (overlapping), as the matcher reports
    // every hit.
    let peers = [
        (AhoCorasickKind::ContiguousNFA, "contiguous NFA"),
        (AhoCorasickKind::DFA, "DFA"),
    ]
    .map(|(kind, name)| {
        let automaton = AhoCorasick::builder()
            .kind(Some(kind))
            .build(&literals)
            .expect("an automaton of the literal word sequences");
        let what = format!("aho-corasick, {name}");
        let (cpu, wall, found) =
            timed_runs(runs, bytes, &calls, Calls::Copied, &what, |turns, _, _| {
                turns
                    .iter()
                    .map(|t| automaton.find_overlapping_iter(&t.text).count())
                    .sum()
            });
        (name, cpu, wall, found)
    });

    // The naive way on the first calls, and both must find the same hits there.
    let mut order: Vec<usize> = (0..phrases.len()).collect();
    order.sort_by_key(|&i| phrases[i].0);
    let mut subset = 0;
    let mut naive_hits = Vec::new();
    let mut compiled_hits = Vec::new();
    let clock = Clock::start();
    for call in calls.iter() {
        if subset >= naive_kb * 1000 {
            break;
        }
        subset += call.bytes;
        let mut hits = Vec::new();
        for (index, turn) in call.turns.iter().enumerate() {
            for &i in &order {
                let (id, phrase, speaker) = &phrases[i];
                if let Some(found) = reference::matches(phrase, *speaker, turn, call.duration) {
                    hits.push(Hit {
                        phrase: *id,
                        turn: index,
                        start: found.start,
                        end: found.end,
                    });
                }
            }
        }
        naive_hits.push(hits);
    }
    let (naive_seconds, naive_wall) = clock.seconds();
    let naive = subset as f64 / 1e6 / naive_seconds;
    let mut scanner = matcher.scanner();
    let mut retuned_scanner = retuned.scanner();
    for call in &calls[..naive_hits.len()] {
        let hits = scanner.scan(&call.turns, call.duration);
        assert_eq!(retuned_scanner.scan(&call.turns, call.duration), hits);
        compiled_hits.push(hits);
    }
    let counts = |hits: &[Vec<Hit>]| hits.iter().map(Vec::len).sum::<usize>();
    let (expected, got) = (counts(&naive_hits), counts(&compiled_hits));
    assert_eq!(
        got, expected,
        "the compiled matcher found {got} hits where the reference matcher found {expected}"
    );
    for (call, (got, expected)) in compiled_hits.iter().zip(&naive_hits).enumerate() {
        assert_eq!(got, expected, "the matchers differ on call {call}");
    }
    eprintln!(
        "naive way: {:.1} KB in {:.2} s, {expected} hits, the same as the compiled matcher's",
        subset as f64 / 1e3,
        naive_seconds
    );

    println!(
        "{} phrases; {:.1} MB of text per run ({} calls, {turns} turns, {:.1} hits per call), median of {runs} runs, one thread",
        phrases.len(),
        bytes as f64 / 1e6,
        calls.len(),
        hit_count as f64 / calls.len() as f64,
    );
    println!();
    println!(
        "| what | MB/s of CPU time | MB/s of wall-clock time | ratio to the naive way (CPU) |"
    );
    println!("|---|---|---|---|");
    println!(
        "| naive way: reference matcher, every phrase against every turn ({:.0} KB, same hits) | {} | {} | 1 |",
        subset as f64 / 1e3,
        figure(naive),
        figure(subset as f64 / 1e6 / naive_wall)
    );
    println!(
        "| compiled matcher as built, a new scanner per call (Matcher::scan) | {} | {} | {:.0} |",
        figure(fresh),
        figure(fresh_wall),
        fresh / naive
    );
    println!(
        "| compiled matcher as built (Scanner::scan) | {} | {} | {:.0} |",
        figure(built),
        figure(built_wall),
        built / naive
    );
    println!(
        "| compiled matcher as built, calls not in the cache (read from main memory) | {} | {} | {:.0} |",
        figure(cold),
        figure(cold_wall),
        cold / naive
    );
    println!(
        "| compiled matcher retuned after the warm-up (Matcher::retuned) | {} | {} | {:.0} |",
        figure(compiled),
        figure(compiled_wall),
        compiled / naive
    );
    for (name, cpu, wall, found) in &peers {
        println!(
            "| aho-corasick ({name}): the {} literal word sequences of the phrases, every occurrence ({:.1} per call) | {} | {} | {:.0} |",
            literals.len(),
            *found as f64 / calls.len() as f64,
            figure(*cpu),
            figure(*wall),
            cpu / naive
        );
    }
    let peer = peers.iter().map(|p| p.1).fold(0.0, f64::max);
    let ratio = compiled / peer;
    println!();
    println!("The retuned matcher is {ratio:.2} times as fast as aho-corasick's faster automaton (target: at least {PEER_RATIO}).");
    if ratio < PEER_RATIO && !cfg!(debug_assertions) {
        eprintln!(
            "the compiled matcher fell below {PEER_RATIO} times aho-corasick's speed: {ratio:.2}"
        );
        std::process::exit(1);
    }
}

/// The literal word sequences of a phrase's text: of each `|` alternative and `&` operand, without the
/// exclusion sign, the anchors, the time windows and the gap allowance, the runs of words between the
/// words with a wildcard.
fn literal_sequences(text: &str) -> Vec<String> {
    let body = text.trim_start_matches('-');
    let body = body.split(" ~s<").next().unwrap_or(body);
    let body = body.split(" ~e<").next().unwrap_or(body);
    let mut sequences = Vec::new();
    for operand in body.split(['|', '&']) {
        let operand = operand.trim().trim_start_matches('^').trim_end_matches('$');
        let operand = operand.split('~').next().unwrap_or(operand);
        let mut run: Vec<&str> = Vec::new();
        for word in operand.split_whitespace() {
            if word.contains(['*', '?']) {
                if !run.is_empty() {
                    sequences.push(run.join(" "));
                    run.clear();
                }
            } else {
                run.push(word);
            }
        }
        if !run.is_empty() {
            sequences.push(run.join(" "));
        }
    }
    sequences
}

/// How a run hands each call to the scan.
#[derive(Clone, Copy)]
enum Calls {
    /// A copy made just before its scan, as the service scans a transcript it has just read.
    Copied,
    /// As generated, long before, mostly out of the cache.
    Generated,
}

/// Scans all the calls `runs` times with one scanner of `matcher`, warmed up on a tenth of them first:
/// the median MB/s of CPU time and of wall-clock time, and the hits of a run.
fn measure(
    matcher: &phrases::Matcher,
    calls: &[Call],
    bytes: usize,
    runs: usize,
    how: Calls,
    what: &str,
) -> (f64, f64, usize) {
    let mut scanner = matcher.scanner();
    for call in &calls[..calls.len() / 10] {
        std::hint::black_box(scanner.scan(&call.turns, call.duration));
    }
    // Every run with the warmed-up scanner, as a worker keeps one: the words it has learnt are most of
    // the calls' words, as in a company's calls.
    timed_runs(runs, bytes, calls, how, what, |turns, duration, run| {
        if run == 0 {
            scanner.scan(turns, duration).len()
        } else {
            scan_again(&mut scanner, turns, duration)
        }
    })
}

/// A scan of a kept scanner after its first run, a function of its own so that a profiler can count
/// those alone (`valgrind --tool=callgrind --toggle-collect='throughput::scan_again'`), the words of the
/// calls all learnt.
#[inline(never)]
fn scan_again(scanner: &mut phrases::Scanner<'_>, turns: &[Turn], duration: f64) -> usize {
    scanner.scan(turns, duration).len()
}

/// Scans all the calls (`bytes` of text) `runs` times with `scan` (given the turns, the duration and the
/// run's index, and giving a call's number of hits), timing each scan alone: the median MB/s of CPU time
/// and of wall-clock time, and the hits of the last run.
fn timed_runs(
    runs: usize,
    bytes: usize,
    calls: &[Call],
    how: Calls,
    what: &str,
    mut scan: impl FnMut(&[Turn], f64, usize) -> usize,
) -> (f64, f64, usize) {
    let (mut results, mut wall_results) = (Vec::new(), Vec::new());
    let mut hit_count = 0;
    for run in 0..runs {
        let (mut seconds, mut wall) = (0.0, 0.0);
        hit_count = 0;
        for call in calls {
            let copy = match how {
                Calls::Copied => Some(call.turns.clone()),
                Calls::Generated => None,
            };
            let turns = copy.as_deref().unwrap_or(&call.turns);
            let clock = Clock::start();
            hit_count += std::hint::black_box(scan(turns, call.duration, run));
            let (cpu, elapsed) = clock.seconds();
            seconds += cpu;
            wall += elapsed;
        }
        eprintln!(
            "{what}, run {}: {seconds:.2} s on the CPU ({wall:.2} s), {:.1} MB/s",
            run + 1,
            bytes as f64 / 1e6 / seconds
        );
        results.push(bytes as f64 / 1e6 / seconds);
        wall_results.push(bytes as f64 / 1e6 / wall);
    }
    results.sort_by(f64::total_cmp);
    wall_results.sort_by(f64::total_cmp);
    (
        results[results.len() / 2],
        wall_results[wall_results.len() / 2],
        hit_count,
    )
}

/// The time this thread spends on the CPU (the kernel's per-thread clock, to the nanosecond), so that the
/// figures hold on a machine shared with other work, and the wall-clock time.
struct Clock {
    cpu: Duration,
    wall: Instant,
}

impl Clock {
    fn cpu() -> Duration {
        let now = clock_gettime(ClockId::ThreadCPUTime);
        Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
    }

    fn start() -> Self {
        Clock {
            cpu: Self::cpu(),
            wall: Instant::now(),
        }
    }

    /// Seconds on the CPU and on the wall clock since the start.
    fn seconds(&self) -> (f64, f64) {
        let wall = self.wall.elapsed().as_secs_f64();
        ((Self::cpu() - self.cpu).as_secs_f64(), wall)
    }
}

fn setting(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {value:?}")),
        Err(_) => default,
    }
}

/// MB/s with three significant digits or so.
fn figure(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}")
    } else if value >= 0.1 {
        format!("{value:.2}")
    } else {
        format!("{value:.4}")
    }
}

/// splitmix64: deterministic, and good enough to draw words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// Ranks drawn with probability proportional to 1 / (rank + 1).
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Self {
        let mut total = 0.0;
        let cumulative = (0..n)
            .map(|rank| {
                total += 1.0 / (rank as f64 + 1.0);
                total
            })
            .collect();
        Zipf { cumulative }
    }

    fn draw(&self, rng: &mut Rng) -> usize {
        let target = rng.unit() * self.cumulative[self.cumulative.len() - 1];
        self.cumulative
            .partition_point(|&c| c < target)
            .min(self.cumulative.len() - 1)
    }
}

/// Frequent words of contact-centre calls, roughly by frequency.
const COMMON: &str = "i you the to and a that it is my for of your can on me we have this so in be \
    with yes okay just no do not what are was will account if at there all but get like it's i'm that's \
    know right um uh help call thank thanks please one need want don't can't let payment card number \
    bill order refund today back now here about see give check been would could they them our us let's \
    time day email address phone name date service problem issue cancel charge charged credit balance \
    month year plan upgrade internet line transfer hold minute second moment sure great perfect sorry \
    understand calling received send sent told said again still already last next first new customer \
    manager supervisor speak talk through because why how when where which who then than also only very \
    much more any some two three five ten hundred dollars fee fees late due pay paid paying process \
    processed verify verification security code password login reset update information details \
    confirm confirmed appreciate patience wait waiting ticket case reference complaint delivery \
    package tracking shipped arrive arrived missing damaged return returned exchange store online app \
    website working work doesn't didn't won't isn't haven't i've you're we're they're there's bank \
    statement discount offer promotion contract renew renewal terminate close closed open opened \
    technician appointment schedule morning afternoon evening tomorrow yesterday monday friday week \
    weekend address zip street city state apartment mr mrs ma'am sir absolutely definitely actually \
    basically literally honestly really well oh hey hi hello bye goodbye anything else everything \
    something nothing someone anyone happy unhappy frustrated disappointed terrible ridiculous";

/// The generated language: the vocabulary by rank, its Zipf law, and the scripted lines.
struct Language {
    words: Vec<String>,
    zipf: Zipf,
    lines: Vec<Vec<usize>>,
    line_zipf: Zipf,
}

/// One generated call: its turns (with timed words) and the bytes of their text.
struct Call {
    turns: Vec<Turn>,
    duration: f64,
    bytes: usize,
}

const VOCABULARY: usize = 30_000;
const LINES: usize = 2_000;

impl Language {
    fn new(rng: &mut Rng) -> Self {
        let mut words: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for word in COMMON.split_whitespace() {
            if seen.insert(word) {
                words.push(word.to_string());
            }
        }
        // Made-up words of 2 to 4 syllables for the long tail, with a few suffixes that wildcard phrases
        // look for.
        const ONSETS: &[&str] = &[
            "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
            "br", "ch", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "st", "str", "th", "tr",
        ];
        const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "ou", "y"];
        const CODAS: &[&str] = &["", "", "", "n", "r", "s", "t", "l", "nd", "ng", "ck", "st"];
        const SUFFIXES: &[&str] = &["", "", "", "", "ing", "ed", "s", "ment", "tion", "er", "ly"];
        let mut tail = HashSet::new();
        while words.len() < VOCABULARY {
            let mut word = String::new();
            for _ in 0..rng.range(1, 3) {
                word.push_str(ONSETS[rng.below(ONSETS.len())]);
                word.push_str(VOWELS[rng.below(VOWELS.len())]);
                word.push_str(CODAS[rng.below(CODAS.len())]);
            }
            word.push_str(SUFFIXES[rng.below(SUFFIXES.len())]);
            if !seen.contains(word.as_str()) && tail.insert(word.clone()) {
                words.push(word);
            }
        }
        let zipf = Zipf::new(words.len());
        // Scripted lines of 3 to 8 words, from the 3,000 most frequent words.
        let head = Zipf::new(3_000);
        let lines = (0..LINES)
            .map(|_| (0..rng.range(3, 8)).map(|_| head.draw(rng)).collect())
            .collect();
        Language {
            words,
            zipf,
            lines,
            line_zipf: Zipf::new(LINES),
        }
    }

    /// A call of 20 to 60 turns, alternating speakers, each of 5 to 40 words (a scripted line in 40 % of
    /// them), about 0.35 s a word.
    fn call(&self, rng: &mut Rng) -> Call {
        let mut turns = Vec::new();
        let mut clock = 0.0;
        let mut bytes = 0;
        let first = if rng.chance(0.5) {
            Speaker::Agent
        } else {
            Speaker::Client
        };
        for index in 0..rng.range(20, 60) {
            let speaker = match (first, index % 2) {
                (Speaker::Agent, 0) | (Speaker::Client, 1) => Speaker::Agent,
                _ => Speaker::Client,
            };
            let length = rng.range(5, 40);
            let mut ranks: Vec<usize> = (0..length).map(|_| self.zipf.draw(rng)).collect();
            if rng.chance(0.4) {
                let line = &self.lines[self.line_zipf.draw(rng)];
                let at = rng.below(length + 1);
                ranks.splice(at..at, line.iter().copied());
            }
            let start = clock;
            let mut words = Vec::with_capacity(ranks.len());
            let mut text = String::new();
            for (i, &rank) in ranks.iter().enumerate() {
                let mut token = self.words[rank].clone();
                if i == 0 || rng.chance(0.02) {
                    token[..1].make_ascii_uppercase();
                }
                if i + 1 == ranks.len() {
                    token.push(if rng.chance(0.2) { '?' } else { '.' });
                } else if rng.chance(0.06) {
                    token.push(',');
                }
                let length = 0.15 + 0.05 * self.words[rank].len() as f64;
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(&token);
                words.push(TimedWord {
                    text: token,
                    start: clock,
                    end: clock + length,
                });
                clock += length + 0.05;
            }
            bytes += text.len();
            turns.push(Turn {
                speaker,
                start,
                end: clock,
                text,
                words: Some(words),
            });
            clock += 0.6;
        }
        Call {
            turns,
            duration: clock,
            bytes,
        }
    }

    /// A word for a phrase: rarely a frequent one, as the words people look for are specific.
    fn content_word(&self, rng: &mut Rng) -> &str {
        let rank = match rng.below(10) {
            0 => rng.range(100, 1_000),
            1..=3 => rng.range(1_000, 5_000),
            _ => rng.range(5_000, VOCABULARY - 1),
        };
        &self.words[rank]
    }

    /// Two to four consecutive words of a scripted line (any line, not only the frequent ones), one of
    /// them at least not among the 100 most frequent words.
    fn line_words(&self, rng: &mut Rng) -> Vec<&str> {
        loop {
            let line = &self.lines[rng.below(self.lines.len())];
            let length = rng.range(2, 4.min(line.len()));
            let at = rng.below(line.len() - length + 1);
            let span = &line[at..at + length];
            if span.iter().any(|&r| r >= 100) {
                return span.iter().map(|&r| self.words[r].as_str()).collect();
            }
        }
    }

    /// A word pattern with a wildcard: a prefix and `*`, `*` and a suffix, or a `?` inside.
    fn wildcard(&self, rng: &mut Rng) -> String {
        loop {
            let word = self.content_word(rng);
            let chars: Vec<char> = word.chars().collect();
            if chars.len() < 5 || !chars.iter().all(|c| c.is_ascii_alphabetic()) {
                continue;
            }
            return match rng.below(10) {
                0..=5 => format!("{}*", &word[..rng.range(4, chars.len() - 1)]),
                6..=7 => format!("*{}", &word[rng.range(1, 2)..]),
                8 => {
                    let at = rng.range(1, chars.len() - 2);
                    format!("{}?{}", &word[..at], &word[at + 1..])
                }
                // Rare: a pattern with neither a prefix nor a suffix, tried on every new word.
                _ if rng.chance(0.05) => format!("*{}*", &word[1..5]),
                _ => format!("{}*", &word[..4]),
            };
        }
    }

    /// One `&` operand: a word, a wildcard, a scripted line's words (maybe anchored), or its words with
    /// gaps allowed (`~N`).
    fn part(&self, rng: &mut Rng) -> String {
        match rng.below(100) {
            0..=34 => self.content_word(rng).to_string(),
            35..=49 => self.wildcard(rng),
            50..=79 => self.line_words(rng).join(" "),
            80..=89 => {
                let mut words: Vec<String> = self
                    .line_words(rng)
                    .into_iter()
                    .map(str::to_string)
                    .collect();
                if rng.chance(0.3) {
                    let last = words.len() - 1;
                    words[last] = format!("{}*", &words[last][..words[last].len().min(3)]);
                }
                format!("{}~{}", words.join(" "), rng.range(2, 5))
            }
            _ => {
                let words = self.line_words(rng).join(" ");
                if rng.chance(0.5) {
                    format!("^{words}")
                } else {
                    format!("{words}$")
                }
            }
        }
    }

    /// A phrase's text and its speaker restriction: parts joined by `&` and `|`, sometimes time windows,
    /// sometimes an exclude phrase.
    fn phrase(&self, rng: &mut Rng) -> (String, Option<Speaker>) {
        let alternatives = if rng.chance(0.2) { rng.range(2, 3) } else { 1 };
        let body: Vec<String> = (0..alternatives)
            .map(|_| {
                let parts = if rng.chance(0.2) { 2 } else { 1 };
                (0..parts)
                    .map(|_| self.part(rng))
                    .collect::<Vec<_>>()
                    .join(" & ")
            })
            .collect();
        let mut text = body.join(" | ");
        if rng.chance(0.1) {
            text.insert(0, '-');
        }
        match rng.below(20) {
            0 => text.push_str(" ~s<30"),
            1 => text.push_str(" ~e<60"),
            _ => {}
        }
        let speaker = match rng.below(10) {
            0..=1 => Some(Speaker::Agent),
            2..=3 => Some(Speaker::Client),
            _ => None,
        };
        (text, speaker)
    }
}
