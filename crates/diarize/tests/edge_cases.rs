//! Inputs a recognizer or a broken file can produce: nothing, silence, segments past the end of the
//! audio, zero-length or unordered segments. None may panic, and every segment gets a label.

fn tone(hz: f64, seconds: f64, rate: u32) -> Vec<i16> {
    (0..(seconds * f64::from(rate)) as usize)
        .map(|i| {
            (6000.0 * (2.0 * std::f64::consts::PI * hz * i as f64 / f64::from(rate)).sin()) as i16
        })
        .collect()
}

#[test]
fn no_segments_give_no_labels() {
    assert!(diarize::diarize(&tone(200.0, 1.0, 8000), 8000, &[]).is_empty());
    assert!(diarize::diarize(&[], 16_000, &[]).is_empty());
}

#[test]
fn no_audio_or_silence_labels_everything_zero() {
    let segments = [(0.0, 1.0), (1.5, 3.0), (3.2, 4.0)];
    assert_eq!(diarize::diarize(&[], 16_000, &segments), vec![0, 0, 0]);
    assert_eq!(
        diarize::diarize(&vec![0; 64_000], 16_000, &segments),
        vec![0, 0, 0]
    );
}

#[test]
fn odd_segments_still_get_one_label_each() {
    let rate = 8000;
    let mut samples = tone(140.0, 2.0, rate);
    samples.extend(tone(260.0, 2.0, rate));
    // Past the end, zero length, reversed, overlapping, and out of order.
    let segments = [
        (0.1, 1.9),
        (2.1, 3.9),
        (10.0, 12.0),
        (1.0, 1.0),
        (3.0, 2.5),
        (0.5, 3.5),
        (0.0, 0.2),
    ];
    let labels = diarize::diarize(&samples, rate, &segments);
    assert_eq!(labels.len(), segments.len());
    assert!(labels.iter().all(|&l| l <= 1));
    // The first segment in time is (0.0, 0.2): label 0 is its speaker, the low tone.
    assert_eq!(labels[6], 0);
    assert_eq!(labels[0], 0);
    assert_eq!(labels[1], 1);
}

#[test]
fn one_segment_is_label_zero() {
    assert_eq!(
        diarize::diarize(&tone(200.0, 1.0, 16_000), 16_000, &[(0.0, 1.0)]),
        vec![0]
    );
}

/// One span of `seconds` whose cuts are every quarter of a second.
fn quarter_cuts(start: f64, seconds: f64) -> Vec<f64> {
    (1..(seconds * 4.0) as usize)
        .map(|k| start + k as f64 / 4.0)
        .collect()
}

#[test]
fn a_span_of_two_voices_is_cut_where_the_second_begins() {
    // A low tone, then at once a high one, in one span; then the low one alone after a pause.
    let rate = 16_000;
    let mut samples = tone(150.0, 2.0, rate);
    samples.extend(tone(250.0, 2.0, rate));
    samples.extend(vec![0; rate as usize / 2]);
    samples.extend(tone(150.0, 2.0, rate));
    let (first, second) = (quarter_cuts(0.0, 4.0), quarter_cuts(4.5, 2.0));
    let spans = [
        diarize::Span {
            start: 0.0,
            end: 4.0,
            cuts: &first,
        },
        diarize::Span {
            start: 4.5,
            end: 6.5,
            cuts: &second,
        },
    ];
    let turns = diarize::diarize_spans(&samples, rate, &spans);
    // The change is at the cut nearest the switch, give or take one cut: a pure tone is all alike, and
    // the frames over the switch, of both, weigh on whichever side they fall.
    assert_eq!(turns.len(), 2);
    let [(0.0, 0), (change, 1)] = turns[0][..] else {
        panic!("{turns:?}");
    };
    assert!((1.75..=2.25).contains(&change), "{turns:?}");
    assert_eq!(turns[1], [(4.5, 0)]);
}

#[test]
fn spans_without_usable_cuts_are_one_turn() {
    let rate = 8000;
    let samples = tone(200.0, 3.0, rate);
    // Cuts outside the span, not numbers, or too near its ends; a span too short to hold two turns; no
    // audio at all.
    let odd = [-1.0, f64::NAN, 0.5, 2.6, 9.0];
    let spans = [
        diarize::Span {
            start: 0.0,
            end: 3.0,
            cuts: &odd,
        },
        diarize::Span {
            start: 0.0,
            end: 1.5,
            cuts: &[0.75],
        },
    ];
    for audio in [&samples[..], &[]] {
        let turns = diarize::diarize_spans(audio, rate, &spans);
        assert_eq!(turns.len(), 2);
        assert!(
            turns.iter().all(|t| t.len() == 1 && t[0].0 == 0.0),
            "{turns:?}"
        );
    }
    assert!(diarize::diarize_spans(&samples, rate, &[]).is_empty());
}
