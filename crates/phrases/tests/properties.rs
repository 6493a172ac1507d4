//! Property tests: on random calls and random phrase sets drawn from the whole grammar, the compiled
//! matcher finds exactly the hits of the reference matcher; and a phrase's canonical text parses back to
//! the same phrase.

use phrases::{reference, Hit, MatcherBuilder, Phrase, Speaker, TimedWord, Turn};
use proptest::prelude::*;
use proptest::sample::select;

/// Tokens of turns: few enough that phrases match often, with case, punctuation, inner apostrophes and
/// hyphens, non-ASCII letters and tokens that are no word at all.
const TOKENS: &[&str] = &[
    "refund",
    "Refund!",
    "REFUNDS",
    "refunded,",
    "fund",
    "funds",
    "the",
    "The",
    "a",
    "A.",
    "my",
    "account",
    "account,",
    "accounts",
    "cancel",
    "Cancel",
    "cancelled",
    "can't",
    "CAN’T",
    "e-mail",
    "email",
    "Straße",
    "STRASSE",
    "ÄRGER",
    "ärger.",
    "x",
    "...",
    "-",
    "—",
    "\"quoted\"",
    "don't",
    "thé",
    "re-fund",
    "42",
    "a1",
    "ｆｕｎｄ",
];

const SEPARATORS: &[&str] = &[" ", " ", " ", "  ", "\t", "\n", "\u{A0}", " , ", "\u{0B}"];

/// Word patterns: literals, wildcards of each kind (prefix, suffix, neither), and words that never occur.
const PATTERNS: &[&str] = &[
    "refund",
    "Refund*",
    "refund*",
    "*und",
    "*unds",
    "re?und",
    "f?nd*",
    "*a*",
    "*n?",
    "the",
    "a",
    "account",
    "acc*nt",
    "account*",
    "can't",
    "can’t",
    "e-mail",
    "email",
    "e-*",
    "straße",
    "stra?e",
    "*ße",
    "ärger",
    "?rger",
    "x",
    "don't",
    "cancel",
    "cancel*",
    "funds",
    "fund",
    "my",
    "42",
    "4*",
    "thé",
    "th?",
    "re-fund",
    "never",
    "nev*r",
    "ｆｕｎｄ",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec((select(TOKENS), select(SEPARATORS)), 0..12).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(token, separator)| format!("{token}{separator}"))
            .collect()
    })
}

fn speaker() -> impl Strategy<Value = Speaker> {
    prop_oneof![Just(Speaker::Agent), Just(Speaker::Client)]
}

/// Quarter seconds, so that times are exact and never negative zero.
fn seconds(max: u32) -> impl Strategy<Value = f64> {
    (0..=max * 4).prop_map(|q| f64::from(q) / 4.0)
}

fn timed_words() -> impl Strategy<Value = Vec<TimedWord>> {
    prop::collection::vec(
        (
            select(TOKENS),
            prop::option::weighted(0.2, select(TOKENS)),
            seconds(120),
            seconds(3),
        ),
        0..10,
    )
    .prop_map(|words| {
        words
            .into_iter()
            .map(|(token, second, start, length)| TimedWord {
                text: match second {
                    Some(other) => format!("{token} {other}"),
                    None => token.to_string(),
                },
                start,
                end: start + length,
            })
            .collect()
    })
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        speaker(),
        seconds(120),
        seconds(10),
        text(),
        prop_oneof![
            5 => Just(None),
            4 => timed_words().prop_map(Some),
            1 => Just(Some(Vec::new())),
        ],
    )
        .prop_map(|(speaker, start, length, text, words)| Turn {
            speaker,
            start,
            end: start + length,
            text,
            words,
        })
}

/// Optional spaces around an operator.
fn space() -> impl Strategy<Value = &'static str> {
    select(&["", " ", "  "][..])
}

fn seq() -> impl Strategy<Value = String> {
    (
        prop::bool::weighted(0.15),
        prop::collection::vec(select(PATTERNS), 1..4),
        prop::bool::weighted(0.15),
        prop_oneof![3 => Just(0u32), 2 => 1u32..5, 1 => Just(50u32)],
        space(),
    )
        .prop_map(|(starts, words, ends, within, gap)| {
            let mut seq = String::new();
            if starts {
                seq.push('^');
            }
            seq.push_str(&words.join(" "));
            if ends {
                seq.push('$');
            }
            if within > 0 && words.len() > 1 {
                seq.push_str(&format!("{gap}~{within}"));
            }
            seq
        })
}

fn joined(
    part: impl Strategy<Value = String>,
    operator: &'static str,
) -> impl Strategy<Value = String> {
    prop::collection::vec((part, space(), space()), 1..3).prop_map(move |parts| {
        let mut out = String::new();
        for (i, (part, before, after)) in parts.into_iter().enumerate() {
            if i > 0 {
                out.push_str(&format!("{before}{operator}{after}"));
            }
            out.push_str(&part);
        }
        out
    })
}

fn window() -> impl Strategy<Value = Option<&'static str>> {
    prop::option::weighted(0.2, select(&["5", "10.5", "30", "60", "0.25", "100"][..]))
}

/// The text of a valid phrase, from the grammar.
fn phrase_text() -> impl Strategy<Value = String> {
    (
        prop::bool::weighted(0.25),
        joined(joined(seq(), "&"), "|"),
        window(),
        window(),
        any::<bool>(),
    )
        .prop_map(|(exclude, body, start, end, end_first)| {
            let mut text = String::new();
            if exclude {
                text.push('-');
            }
            text.push_str(&body);
            let mut windows = Vec::new();
            if let Some(t) = start {
                windows.push(format!(" ~s<{t}"));
            }
            if let Some(t) = end {
                windows.push(format!(" ~e<{t}"));
            }
            if end_first {
                windows.reverse();
            }
            text + &windows.concat()
        })
}

fn phrase_set() -> impl Strategy<Value = Vec<(u32, String, Option<Speaker>)>> {
    prop::collection::vec(
        (
            0u32..20,
            phrase_text(),
            prop::option::weighted(0.3, speaker()),
        ),
        1..12,
    )
}

/// The hits the reference matcher gives, in the order `Matcher::scan` promises.
fn reference_hits(
    phrases: &[(u32, Phrase, Option<Speaker>)],
    turns: &[Turn],
    duration: f64,
) -> Vec<Hit> {
    let mut order: Vec<usize> = (0..phrases.len()).collect();
    order.sort_by_key(|&i| phrases[i].0);
    let mut hits = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        for &i in &order {
            let (id, phrase, speaker) = &phrases[i];
            if let Some(found) = reference::matches(phrase, *speaker, turn, duration) {
                hits.push(Hit {
                    phrase: *id,
                    turn: index,
                    start: found.start,
                    end: found.end,
                });
            }
        }
    }
    hits
}

fn compiled(set: &[(u32, String, Option<Speaker>)]) -> Vec<(u32, Phrase, Option<Speaker>)> {
    set.iter()
        .map(|(id, text, speaker)| match Phrase::parse(text) {
            Ok(phrase) => (*id, phrase, *speaker),
            Err(e) => panic!("the generator made an invalid phrase: {e}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_matcher_finds_exactly_the_reference_hits(
        set in phrase_set(),
        turns in prop::collection::vec(turn(), 0..8),
        duration in seconds(200),
    ) {
        let phrases = compiled(&set);
        let mut builder = MatcherBuilder::new();
        for (id, phrase, speaker) in &phrases {
            builder.add(*id, phrase.clone(), *speaker);
        }
        let matcher = builder.build().unwrap();
        let expected = reference_hits(&phrases, &turns, duration);
        prop_assert_eq!(matcher.scan(&turns, duration), expected.clone());
        // A scanner that keeps what it learnt from one call to the next gives the same hits.
        let mut scanner = matcher.scanner();
        let reversed: Vec<Turn> = turns.iter().rev().cloned().collect();
        prop_assert_eq!(scanner.scan(&reversed, duration), reference_hits(&phrases, &reversed, duration));
        prop_assert_eq!(scanner.scan(&turns, duration), expected.clone());
        // Retuned to the patterns those turns had, it gives the same hits, on them and on others.
        let retuned = matcher.retuned(&scanner.observed());
        prop_assert_eq!(retuned.scan(&turns, duration), expected);
        prop_assert_eq!(retuned.scan(&reversed, duration), reference_hits(&phrases, &reversed, duration));
    }

    #[test]
    fn canonical_text_parses_back_to_the_same_phrase(text in phrase_text()) {
        let phrase = Phrase::parse(&text).unwrap();
        let canonical = phrase.to_string();
        let again = Phrase::parse(&canonical).unwrap();
        prop_assert_eq!(&again, &phrase);
        prop_assert_eq!(again.to_string(), canonical);
        prop_assert_eq!(phrase.is_exclude(), text.starts_with('-'));
    }

    /// Any text over the phrase alphabet either parses, to a phrase whose canonical text parses back to
    /// it, or is refused with a position inside it (or just past its end).
    #[test]
    fn any_text_parses_or_is_refused_at_a_position_in_it(
        text in "[ab*?'’\\- |&~^$se<0-9.!]{0,30}"
    ) {
        match Phrase::parse(&text) {
            Ok(phrase) => {
                prop_assert_eq!(Phrase::parse(&phrase.to_string()).unwrap(), phrase);
            }
            Err(e) => {
                prop_assert!(e.position() <= text.chars().count());
                prop_assert_eq!(e.to_string(), format!("invalid phrase {:?}: {} at position {}", text, e.reason(), e.position()));
            }
        }
    }
}

/// Many phrases compiled together (sharing patterns, prefixes and suffixes) against the reference, on a
/// deterministic pseudo-random call.
#[test]
fn two_thousand_phrases_compiled_together_give_the_reference_hits() {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let mut phrases = Vec::new();
    for id in 0..2000u32 {
        let alternatives: Vec<String> = (0..1 + next(2))
            .map(|_| {
                let parts: Vec<String> = (0..1 + next(2))
                    .map(|_| {
                        let n = 1 + next(3);
                        let words: Vec<&str> =
                            (0..n).map(|_| PATTERNS[next(PATTERNS.len())]).collect();
                        let within = if n > 1 && next(3) == 0 {
                            format!("~{}", 2 + next(3))
                        } else {
                            String::new()
                        };
                        format!("{}{}", words.join(" "), within)
                    })
                    .collect();
                parts.join(" & ")
            })
            .collect();
        let exclude = if next(4) == 0 { "-" } else { "" };
        let text = format!("{exclude}{}", alternatives.join(" | "));
        let speaker = [None, Some(Speaker::Agent), Some(Speaker::Client)][next(3)];
        phrases.push((id, Phrase::parse(&text).unwrap(), speaker));
    }
    let turns: Vec<Turn> = (0..60)
        .map(|i| {
            let words: Vec<&str> = (0..next(25)).map(|_| TOKENS[next(TOKENS.len())]).collect();
            let speaker = if i % 2 == 0 {
                Speaker::Agent
            } else {
                Speaker::Client
            };
            Turn::new(speaker, i as f64, i as f64 + 1.0, words.join(" "))
        })
        .collect();
    let mut builder = MatcherBuilder::new();
    for (id, phrase, speaker) in &phrases {
        builder.add(*id, phrase.clone(), *speaker);
    }
    let got = builder.build().unwrap().scan(&turns, 60.0);
    let expected = reference_hits(&phrases, &turns, 60.0);
    assert!(
        expected.len() > 1000,
        "too few hits to mean anything: {}",
        expected.len()
    );
    assert_eq!(got, expected);
}
