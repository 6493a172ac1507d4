//! The score of a leaf (docs/phrases.md, Scoring), from hand-written hits and from a scanned call.

use phrases::{score_leaf, Hit, MatcherBuilder, Phrase, Speaker, Turn, TurnMatch};

fn hit(phrase: u32, turn: usize) -> Hit {
    Hit {
        phrase,
        turn,
        start: turn as f64,
        end: turn as f64 + 1.0,
    }
}

fn at(turn: usize) -> TurnMatch {
    TurnMatch {
        turn,
        start: turn as f64,
        end: turn as f64 + 1.0,
    }
}

#[test]
fn each_turn_adds_its_includes_minus_its_excludes() {
    // Includes 1, 2, 3; excludes 10, 11.
    let hits = [
        // Turn 0: two includes, one exclude: 1.
        hit(1, 0),
        hit(2, 0),
        hit(10, 0),
        // Turn 1: three includes: 3.
        hit(1, 1),
        hit(2, 1),
        hit(3, 1),
        // Turn 2: one include, two excludes: 0, not -1.
        hit(3, 2),
        hit(10, 2),
        hit(11, 2),
    ];
    assert_eq!(score_leaf(&hits, &[1, 2, 3], &[10, 11]).score, 4);
}

#[test]
fn a_turn_with_only_exclude_matches_changes_nothing() {
    let hits = [hit(1, 0), hit(10, 1), hit(11, 1), hit(1, 2)];
    let leaf = score_leaf(&hits, &[1], &[10, 11]);
    assert_eq!(leaf.score, 2);
    // And does not lower the score of other turns.
    assert_eq!(score_leaf(&[hit(10, 1)], &[1], &[10]).score, 0);
}

#[test]
fn exclude_phrases_are_listed_with_their_matches_even_when_they_changed_nothing() {
    let hits = [hit(1, 0), hit(10, 1), hit(1, 2), hit(10, 2)];
    let leaf = score_leaf(&hits, &[1, 2], &[10]);
    assert_eq!(leaf.score, 1);
    let listed: Vec<(u32, bool, Vec<TurnMatch>)> = leaf
        .phrases
        .into_iter()
        .map(|p| (p.phrase, p.exclude, p.matches))
        .collect();
    assert_eq!(
        listed,
        [
            (1, false, vec![at(0), at(2)]),
            (2, false, vec![]),
            (10, true, vec![at(1), at(2)]),
        ]
    );
}

#[test]
fn hits_of_other_phrases_are_ignored_and_ids_listed_once() {
    let hits = [hit(5, 0), hit(1, 0), hit(6, 1)];
    let leaf = score_leaf(&hits, &[1, 1], &[5]);
    assert_eq!(leaf.score, 0);
    assert_eq!(leaf.phrases.len(), 2);
    assert_eq!(leaf.phrases[0].matches, [at(0)]);
    assert_eq!(leaf.phrases[1].matches, [at(0)]);
    assert_eq!(score_leaf(&[], &[1], &[2]).score, 0);
    assert_eq!(score_leaf(&hits, &[], &[]).phrases, []);
}

#[test]
fn an_id_in_both_lists_counts_on_both_sides() {
    let leaf = score_leaf(&[hit(1, 0), hit(2, 0)], &[1, 2], &[1]);
    assert_eq!(leaf.score, 1);
    assert_eq!(leaf.phrases.len(), 3);
}

#[test]
fn hits_need_not_be_sorted() {
    let hits = [hit(1, 2), hit(10, 0), hit(2, 0), hit(1, 0)];
    let leaf = score_leaf(&hits, &[1, 2], &[10]);
    // Turn 0: 2 - 1; turn 2: 1.
    assert_eq!(leaf.score, 2);
    assert_eq!(leaf.phrases[0].matches, [at(0), at(2)]);
}

#[test]
fn a_leaf_scored_from_a_scanned_call() {
    let leaf = [
        (1, "refund | money back", None),
        (2, "cancel* account~3", Some(Speaker::Client)),
        (3, "-refund & policy", None),
        (4, "-thank you ~e<20", Some(Speaker::Client)),
    ];
    let mut builder = MatcherBuilder::new();
    let (mut include, mut exclude) = (Vec::new(), Vec::new());
    for (id, text, speaker) in leaf {
        let phrase = Phrase::parse(text).unwrap();
        if phrase.is_exclude() {
            exclude.push(id);
        } else {
            include.push(id);
        }
        builder.add(id, phrase, speaker);
    }
    let turns = [
        // 1 and 2 match: +2.
        Turn::new(
            Speaker::Client,
            0.0,
            5.0,
            "I cancelled my account, I want a refund.",
        ),
        // 2 does not match (agent), 1 and 3 do: 1 - 1 = 0.
        Turn::new(
            Speaker::Agent,
            5.0,
            9.0,
            "Cancel the account? Our refund policy...",
        ),
        // 1 and 3 ("refund" and "policy"): 1 - 1 = 0.
        Turn::new(
            Speaker::Client,
            9.0,
            12.0,
            "What policy covers a refund... no, I mean",
        ),
        // 1 and 4 (client, in the last 20 s of 60): 1 - 1 = 0.
        Turn::new(Speaker::Client, 45.0, 50.0, "Money back, thank you"),
        // 1 only; 4 would, but the turn is not in the last 20 s: +1.
        Turn::new(Speaker::Client, 20.0, 25.0, "Thank you, money back please"),
    ];
    let hits = builder.build().unwrap().scan(&turns, 60.0);
    let pairs: Vec<(usize, u32)> = hits.iter().map(|h| (h.turn, h.phrase)).collect();
    assert_eq!(
        pairs,
        [
            (0, 1),
            (0, 2),
            (1, 1),
            (1, 3),
            (2, 1),
            (2, 3),
            (3, 1),
            (3, 4),
            (4, 1)
        ]
    );
    let scored = score_leaf(&hits, &include, &exclude);
    assert_eq!(scored.score, 3);
    let counts: Vec<(u32, usize)> = scored
        .phrases
        .iter()
        .map(|p| (p.phrase, p.matches.len()))
        .collect();
    assert_eq!(counts, [(1, 5), (2, 1), (3, 2), (4, 1)]);
}

#[test]
fn the_example_of_the_documentation() {
    let mut builder = MatcherBuilder::new();
    builder.add(1, Phrase::parse("refund | money back").unwrap(), None);
    builder.add(
        2,
        Phrase::parse("cancel* account~3").unwrap(),
        Some(Speaker::Client),
    );
    builder.add(3, Phrase::parse("-refund & policy").unwrap(), None);
    let turns = [
        Turn::new(
            Speaker::Client,
            0.0,
            4.0,
            "I cancelled my account, I want a refund.",
        ),
        Turn::new(
            Speaker::Agent,
            4.0,
            8.0,
            "Cancel the account? Our refund policy…",
        ),
        Turn::new(Speaker::Client, 8.0, 9.0, "What policy covers that?"),
        Turn::new(
            Speaker::Client,
            9.0,
            12.0,
            "No refund policy applies, money back",
        ),
    ];
    let hits = builder.build().unwrap().scan(&turns, 12.0);
    let leaf = score_leaf(&hits, &[1, 2], &[3]);
    assert_eq!(leaf.score, 2);
    let excluded = &leaf.phrases[2];
    assert!(excluded.exclude);
    let turns: Vec<usize> = excluded.matches.iter().map(|m| m.turn).collect();
    assert_eq!(turns, [1, 3]);
}
