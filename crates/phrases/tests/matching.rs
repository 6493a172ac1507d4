//! The matching rules of docs/phrases.md, one by one, on hand-written turns with hand-computed answers.
//! Every case is checked on both the reference matcher and the compiled one.

use phrases::{reference, Hit, MatcherBuilder, Phrase, Speaker, TimedWord, Turn};

const DURATION: f64 = 100.0;

fn client(text: &str) -> Turn {
    Turn::new(Speaker::Client, 1.0, 2.0, text)
}

/// A turn whose words have their own times: word `i` spans `[i, i + 0.5]`.
fn timed(text: &str) -> Turn {
    let words = text
        .split(' ')
        .enumerate()
        .map(|(i, w)| TimedWord {
            text: w.to_string(),
            start: i as f64,
            end: i as f64 + 0.5,
        })
        .collect();
    Turn {
        speaker: Speaker::Agent,
        start: 0.0,
        end: 50.0,
        text: "ignored when there are words".to_string(),
        words: Some(words),
    }
}

/// Where the phrase matches the turn, by both matchers (which must agree).
fn find(phrase: &str, speaker: Option<Speaker>, turn: &Turn, duration: f64) -> Option<(f64, f64)> {
    let parsed = Phrase::parse(phrase).unwrap();
    let expected = reference::matches(&parsed, speaker, turn, duration).map(|m| (m.start, m.end));
    let mut builder = MatcherBuilder::new();
    builder.add(7, parsed, speaker);
    let hits = builder
        .build()
        .unwrap()
        .scan(std::slice::from_ref(turn), duration);
    let got = match hits.as_slice() {
        [] => None,
        [hit] => {
            assert_eq!((hit.phrase, hit.turn), (7, 0));
            Some((hit.start, hit.end))
        }
        more => panic!("more than one hit: {more:?}"),
    };
    assert_eq!(
        got, expected,
        "{phrase:?} on {turn:?}: matcher and reference differ"
    );
    got
}

fn matches(phrase: &str, text: &str) -> bool {
    find(phrase, None, &client(text), DURATION).is_some()
}

#[test]
fn case_and_punctuation_do_not_matter() {
    assert!(matches("refund", "I want a REFUND!"));
    assert!(matches("REFUND", "\"refund,\" she said"));
    assert!(matches("ärger", "So viel ÄRGER."));
    assert!(!matches("refund", "refunds"));
    assert!(!matches("refund", "re fund"));
    assert_eq!(
        find("refund", None, &client("a refund"), DURATION),
        Some((1.0, 2.0))
    );
}

#[test]
fn inner_apostrophes_and_hyphens_are_part_of_the_word() {
    assert!(matches("don't", "I DON’T know"));
    assert!(matches("don’t", "I don't know"));
    assert!(!matches("dont", "I don't know"));
    assert!(matches("e-mail", "(E-Mail)"));
    assert!(!matches("email", "e-mail"));
    assert!(!matches("mail", "e-mail"));
    // Outer ones are punctuation.
    assert!(matches("cause", "'cause I said so"));
    assert!(matches("students", "the students' books"));
}

#[test]
fn a_sequence_is_consecutive_words_in_order() {
    assert!(matches("cancel account", "please cancel account now"));
    assert!(matches("cancel account", "cancel, account"));
    assert!(!matches("cancel account", "cancel my account"));
    assert!(!matches("cancel account", "account cancel"));
    // Tokens that are only punctuation are not words.
    assert!(matches("cancel account", "cancel — account"));
    assert!(matches("very very", "it is very very good"));
    assert!(!matches("very very", "it is very good"));
}

#[test]
fn within_n_words() {
    assert!(matches("cancel account~2", "cancel my account"));
    assert!(!matches("cancel account~2", "cancel the whole account"));
    assert!(matches("cancel account~3", "cancel the whole account"));
    assert!(!matches("cancel account~3", "account then cancel"));
    assert!(matches("cancel account~1", "cancel account"));
    assert!(!matches("cancel account~1", "cancel my account"));
    // Each pattern within N of the previous one, not of the first.
    assert!(matches("a b c~2", "a x b x c"));
    assert!(!matches("a b c~2", "a x x b c"));
    assert!(matches("a b c~50", "a x x x x x x x x x b c"));
}

#[test]
fn anchors() {
    assert!(matches("^hello", "Hello there"));
    assert!(!matches("^hello", "well hello"));
    assert!(matches("bye$", "ok, bye."));
    assert!(!matches("bye$", "bye now"));
    assert!(matches("^yes$", "Yes."));
    assert!(matches("^yes$", "— yes !"));
    assert!(!matches("^yes$", "yes yes"));
    assert!(matches("^thank you$", "Thank you!"));
    assert!(!matches("^thank you$", "thank you very much"));
    assert!(matches("^a b$~3", "a x b"));
    assert!(!matches("^a b$~3", "a x b y"));
    assert!(!matches("^a b$~3", "y a x b"));
    // `$` applies to the last pattern: here "b" must be the last word, "a" anywhere within 2 before.
    assert!(matches("a b$~2", "a a x b"));
    assert!(matches("a b$~2", "a x b"));
    assert!(!matches("a b$~2", "a x x b"));
}

#[test]
fn wildcards() {
    assert!(matches("refund*", "refund"));
    assert!(matches("refund*", "refunds"));
    assert!(matches("refund*", "Refunded!"));
    assert!(!matches("refund*", "refun"));
    assert!(matches("*fund", "refund"));
    assert!(matches("*fund", "fund"));
    assert!(!matches("*fund", "funds"));
    assert!(matches("re?und", "refund"));
    assert!(!matches("re?und", "reund"));
    assert!(!matches("re?und", "reffund"));
    assert!(matches("*un*", "refunds"));
    assert!(matches("stra?e", "Straße"));
    assert!(matches("can't*", "can't"));
    assert!(matches("e-*", "e-mail"));
    assert!(matches("cancel* acc*", "Cancelled accounts"));
}

#[test]
fn all_parts_anywhere_in_the_turn_in_any_order() {
    assert!(matches("refund & account", "account for the refund"));
    assert!(matches("refund & account", "refund my account"));
    assert!(!matches("refund & account", "refund my money"));
    assert!(matches(
        "cancel account & refund",
        "refund and cancel account"
    ));
    assert!(!matches(
        "cancel account & refund",
        "refund and cancel my account"
    ));
    // Parts may share words.
    assert!(matches("refund & refund", "a refund"));
    assert!(matches("my refund & refund please", "my refund please"));
}

#[test]
fn either_alternative() {
    assert!(matches("refund | money back", "I want my money back"));
    assert!(matches("refund | money back", "a refund"));
    assert!(!matches("refund | money back", "money is back"));
    assert!(matches("a & b | c", "c"));
    assert!(matches("a & b | c", "b a"));
    assert!(!matches("a & b | c", "a"));
}

#[test]
fn times_are_those_of_the_words_that_satisfied_the_phrase() {
    // Words: please 0, cancel 1, account 2.
    let turn = timed("please cancel account");
    assert_eq!(
        find("cancel account", None, &turn, DURATION),
        Some((1.0, 2.5))
    );
    // The leftmost occurrence of a sequence.
    let turn = timed("refund x refund");
    assert_eq!(find("refund", None, &turn, DURATION), Some((0.0, 0.5)));
    // `&`: the leftmost occurrence of each part, whatever their order.
    let turn = timed("account x refund y account");
    assert_eq!(
        find("refund & account", None, &turn, DURATION),
        Some((0.0, 2.5))
    );
    // `|`: the first alternative in textual order that matches, not the leftmost one.
    let turn = timed("account x refund");
    assert_eq!(
        find("refund | account", None, &turn, DURATION),
        Some((2.0, 2.5))
    );
    assert_eq!(
        find("nothing | account", None, &turn, DURATION),
        Some((0.0, 0.5))
    );
    // `~N`: smallest first position, then smallest second: a(0) reaches b(2) within 3.
    let turn = timed("a a b b");
    assert_eq!(find("a b~3", None, &turn, DURATION), Some((0.0, 2.5)));
    // a(0) cannot reach b(3) within 2, so the occurrence starts at a(2).
    let turn = timed("a x a b");
    assert_eq!(find("a b~2", None, &turn, DURATION), Some((2.0, 3.5)));
}

#[test]
fn earliest_start_and_latest_end_even_when_words_are_out_of_order() {
    let words = [("cancel", 5.0, 6.0), ("account", 4.0, 4.5)]
        .map(|(text, start, end)| TimedWord {
            text: text.to_string(),
            start,
            end,
        })
        .to_vec();
    let turn = Turn {
        words: Some(words),
        ..client("")
    };
    assert_eq!(
        find("cancel account", None, &turn, DURATION),
        Some((4.0, 6.0))
    );
}

#[test]
fn words_with_times_replace_the_text() {
    let mut turn = timed("cancel my-account now");
    turn.text = "refund".to_string();
    assert_eq!(find("refund", None, &turn, DURATION), None);
    assert_eq!(find("my-account", None, &turn, DURATION), Some((1.0, 1.5)));
    // A timed word holding several tokens gives each of them its times.
    let turn = Turn {
        words: Some(vec![
            TimedWord {
                text: "Cancel my".to_string(),
                start: 3.0,
                end: 4.0,
            },
            TimedWord {
                text: "...".to_string(),
                start: 4.0,
                end: 4.5,
            },
            TimedWord {
                text: "account".to_string(),
                start: 5.0,
                end: 6.0,
            },
        ]),
        ..client("")
    };
    assert_eq!(find("my account", None, &turn, DURATION), Some((3.0, 6.0)));
    assert_eq!(find("^cancel", None, &turn, DURATION), Some((3.0, 4.0)));
    // An empty list of words: the text is read, with the turn's times.
    let turn = Turn {
        words: Some(Vec::new()),
        ..client("a refund")
    };
    assert_eq!(find("refund", None, &turn, DURATION), Some((1.0, 2.0)));
}

#[test]
fn start_window() {
    let at = |start: f64| Turn::new(Speaker::Agent, start, start + 1.0, "hello there");
    assert!(find("hello ~s<10", None, &at(0.0), DURATION).is_some());
    assert!(find("hello ~s<10", None, &at(9.9), DURATION).is_some());
    assert!(find("hello ~s<10", None, &at(10.0), DURATION).is_none());
    assert!(find("hello ~s<10.5", None, &at(10.0), DURATION).is_some());
}

#[test]
fn end_window() {
    let at = |start: f64| Turn::new(Speaker::Agent, start, start + 1.0, "bye now");
    assert!(find("bye ~e<30", None, &at(70.0), 100.0).is_some());
    assert!(find("bye ~e<30", None, &at(99.0), 100.0).is_some());
    assert!(find("bye ~e<30", None, &at(69.9), 100.0).is_none());
    assert!(find("bye ~e<30", None, &at(69.9), 99.9).is_some());
    // Both windows: the turn must be in each.
    assert!(find("bye ~s<50 ~e<60", None, &at(45.0), 100.0).is_some());
    assert!(find("bye ~s<50 ~e<60", None, &at(35.0), 100.0).is_none());
    assert!(find("bye ~s<50 ~e<60", None, &at(55.0), 100.0).is_none());
    // The window is the phrase's, whatever alternative matches.
    assert!(find("nothing | bye ~e<10", None, &at(50.0), 100.0).is_none());
}

#[test]
fn speaker_restriction() {
    let agent = Turn::new(Speaker::Agent, 0.0, 1.0, "refund");
    let client = Turn::new(Speaker::Client, 0.0, 1.0, "refund");
    assert!(find("refund", Some(Speaker::Agent), &agent, DURATION).is_some());
    assert!(find("refund", Some(Speaker::Agent), &client, DURATION).is_none());
    assert!(find("refund", Some(Speaker::Client), &client, DURATION).is_some());
    assert!(find("refund", None, &agent, DURATION).is_some());
    assert!(find("refund", None, &client, DURATION).is_some());
}

#[test]
fn exclude_phrases_match_like_the_others() {
    assert!(matches("-refund", "a refund"));
    assert!(matches("-cancel account~2", "cancel my account"));
}

#[test]
fn a_phrase_matches_a_turn_once() {
    let turns = [
        client("refund refund refund"),
        client("no"),
        client("Refund"),
    ];
    let mut builder = MatcherBuilder::new();
    builder.add(1, Phrase::parse("refund").unwrap(), None);
    let hits = builder.build().unwrap().scan(&turns, DURATION);
    let at = |turn| Hit {
        phrase: 1,
        turn,
        start: 1.0,
        end: 2.0,
    };
    assert_eq!(hits, [at(0), at(2)]);
}

#[test]
fn hits_are_sorted_by_turn_then_phrase_id() {
    let turns = [
        client("refund please"),
        Turn::new(Speaker::Agent, 3.0, 4.0, "please wait"),
    ];
    let mut builder = MatcherBuilder::new();
    for (id, text) in [(9, "please"), (2, "refund"), (5, "pleas*"), (2, "wait")] {
        builder.add(id, Phrase::parse(text).unwrap(), None);
    }
    let hits: Vec<(usize, u32)> = builder
        .build()
        .unwrap()
        .scan(&turns, DURATION)
        .iter()
        .map(|h| (h.turn, h.phrase))
        .collect();
    assert_eq!(hits, [(0, 2), (0, 5), (0, 9), (1, 2), (1, 5), (1, 9)]);
}

#[test]
fn empty_turns_and_matchers() {
    assert!(!matches("refund", ""));
    assert!(!matches("^refund", "..."));
    let turns = [client("refund")];
    assert!(MatcherBuilder::new()
        .build()
        .unwrap()
        .scan(&turns, DURATION)
        .is_empty());
    let mut builder = MatcherBuilder::new();
    builder.add(1, Phrase::parse("refund").unwrap(), None);
    assert!(builder.build().unwrap().scan(&[], DURATION).is_empty());
}
