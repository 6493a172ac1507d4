//! A scan's budget of wildcard matching: a call whose new words would take more is given up, and the
//! scanner goes on with the next call exactly as a new scanner would.

use phrases::{MatcherBuilder, OverBudget, Phrase, Speaker, Turn};

fn matcher() -> phrases::Matcher {
    let mut builder = MatcherBuilder::new();
    // Words starting and ending with a wildcard, which every new word of a call is tried against.
    for (id, letter) in ('b'..='k').enumerate() {
        let text = format!("*{}{letter}*", "a".repeat(40));
        builder.add(id as u32, Phrase::parse(&text).unwrap(), None);
    }
    builder.add(100, Phrase::parse("refund").unwrap(), None);
    builder.add(101, Phrase::parse("*aac*").unwrap(), Some(Speaker::Client));
    builder.build().unwrap()
}

fn long_words(n: usize) -> String {
    (0..n)
        .map(|i| format!("{}{i}", "a".repeat(120)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_call_over_its_budget_is_given_up_and_leaves_the_scanner_as_it_was() {
    let matcher = matcher();
    let costly = [
        Turn::new(Speaker::Client, 0.0, 5.0, "refund xaacx"),
        Turn::new(Speaker::Client, 5.0, 60.0, long_words(200)),
    ];
    let plain = [Turn::new(
        Speaker::Client,
        0.0,
        5.0,
        "a refund for aac and xaaaaaaaacz",
    )];
    let expected = matcher.scan(&plain, 5.0);
    assert!(!expected.is_empty());

    let mut scanner = matcher.scanner();
    assert_eq!(
        scanner.scan_within(&costly, 60.0, 100_000),
        Err(OverBudget { budget: 100_000 })
    );
    assert_eq!(
        scanner.scan_within(&plain, 5.0, 100_000).unwrap(),
        expected,
        "the next call is read as by a new scanner"
    );
    // With room enough, the costly call gives what an unbounded scan gives.
    let unbounded = matcher.scan(&costly, 60.0);
    assert_eq!(
        scanner.scan_within(&costly, 60.0, u64::MAX / 2).unwrap(),
        unbounded
    );
    // Words known already cost nothing: the same call again fits a tiny budget.
    assert_eq!(scanner.scan_within(&costly, 60.0, 1).unwrap(), unbounded);
}
