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
