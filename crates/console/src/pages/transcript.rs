//! A call's transcript by speaker with times, each phrase match of its applications a `<mark>` naming
//! the application, the category and the phrase. `/appmatches` says where phrases matched by turn and
//! time (`[start, end, speaker, text]`); a turn with word times has the words inside those times
//! marked, one without has its whole text marked.

use maud::{html, Markup};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Seconds either side within which a match's times are a turn's or a word's (the API writes times as
/// they were given; a margin keeps floating-point noise from losing a match).
const SLACK: f64 = 0.001;

#[derive(Debug, Deserialize)]
pub struct Word {
    pub word: String,
    pub start: f64,
    pub end: f64,
}

/// A turn as `GET /calls` answers it.
#[derive(Debug, Deserialize)]
pub struct Utterance {
    pub speaker: String,
    pub start: f64,
    pub end: f64,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub words: Option<Vec<Word>>,
}

/// Where one phrase matched, and what it is: `billing › Sales › Upsell: premium`.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub start: f64,
    pub end: f64,
    pub speaker: String,
    pub text: String,
    pub label: String,
}

/// Every phrase match of an `/appmatches` scorecard, application by application.
pub fn matches(scorecard: &Map<String, Value>) -> Vec<Match> {
    let mut found = Vec::new();
    for (app, categories) in scorecard {
        if let Some(categories) = categories.as_object() {
            walk(app, categories, &mut found);
        }
    }
    found
}

fn walk(path: &str, categories: &Map<String, Value>, found: &mut Vec<Match>) {
    for (name, category) in categories {
        let here = format!("{path} › {name}");
        if let Some(subcategories) = category["subcategories"].as_object() {
            walk(&here, subcategories, found);
        }
        for phrase in category["match_data"].as_array().into_iter().flatten() {
            let text = phrase["phrase"].as_str().unwrap_or_default();
            for place in phrase["matches"].as_array().into_iter().flatten() {
                found.push(Match {
                    start: place[0].as_f64().unwrap_or_default(),
                    end: place[1].as_f64().unwrap_or_default(),
                    speaker: place[2].as_str().unwrap_or_default().to_string(),
                    text: place[3].as_str().unwrap_or_default().to_string(),
                    label: format!("{here}: {text}"),
                });
            }
        }
    }
}

/// The matches in `turn`: its speaker's, of its text, within its times.
pub fn of_turn<'m>(turn: &Utterance, matches: &'m [Match]) -> Vec<&'m Match> {
    matches
        .iter()
        .filter(|m| {
            m.speaker == turn.speaker
                && m.text == turn.text
                && m.start >= turn.start - SLACK
                && m.end <= turn.end + SLACK
        })
        .collect()
}

/// The turn's text in pieces, each with the labels of the matches that cover it (none: not marked).
pub fn pieces<'m>(turn: &Utterance, matches: &[&'m Match]) -> Vec<(String, Vec<&'m str>)> {
    if matches.is_empty() {
        return vec![(turn.text.clone(), Vec::new())];
    }
    let whole = || {
        vec![(
            turn.text.clone(),
            matches.iter().map(|m| m.label.as_str()).collect(),
        )]
    };
    let Some(spans) = word_spans(turn) else {
        return whole();
    };
    let labels: Vec<Vec<&str>> = spans
        .iter()
        .map(|(_, word)| {
            matches
                .iter()
                .filter(|m| word.start >= m.start - SLACK && word.end <= m.end + SLACK)
                .map(|m| m.label.as_str())
                .collect()
        })
        .collect();
    if labels.iter().all(Vec::is_empty) {
        return whole();
    }
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    let mut push = |text: &str, marks: Vec<&'m str>| match out.last_mut() {
        Some((last, last_marks)) if *last_marks == marks => last.push_str(text),
        _ if text.is_empty() => {}
        _ => out.push((text.to_string(), marks)),
    };
    let mut at = 0;
    for (i, ((span, _), word_labels)) in spans.iter().zip(&labels).enumerate() {
        // The gap between two words is marked when both sides are marked alike.
        let gap_labels = match i.checked_sub(1) {
            Some(previous) if labels[previous] == *word_labels => word_labels.clone(),
            _ => Vec::new(),
        };
        push(&turn.text[at..span.start], gap_labels);
        push(&turn.text[span.clone()], word_labels.clone());
        at = span.end;
    }
    push(&turn.text[at..], Vec::new());
    out
}

/// Where each timed word is in the turn's text, in order; `None` when a word is not found there (the
/// text was written apart from its words).
fn word_spans(turn: &Utterance) -> Option<Vec<(std::ops::Range<usize>, &Word)>> {
    let words = turn.words.as_ref().filter(|w| !w.is_empty())?;
    let mut at = 0;
    let mut spans = Vec::with_capacity(words.len());
    for word in words {
        let found = turn.text[at..].find(word.word.as_str())? + at;
        let end = found + word.word.len();
        spans.push((found..end, word));
        at = end;
    }
    Some(spans)
}

/// `m:ss` (or `h:mm:ss`) of a time in seconds.
pub fn clock(seconds: f64) -> String {
    let total = seconds.max(0.0).floor() as u64;
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

fn speaker_name(speaker: &str) -> String {
    let mut chars = speaker.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Unknown".into(),
    }
}

/// The transcript as an ordered list of turns; with a recording, each turn's time is a button that
/// plays from there.
pub fn render(turns: &[Utterance], matches: &[Match], audio: bool) -> Markup {
    html! {
        ol.transcript {
            @for turn in turns {
                @let found = of_turn(turn, matches);
                li.turn.(turn.speaker) data-start=(turn.start) data-end=(turn.end) {
                    p.said {
                        span.speaker { (speaker_name(&turn.speaker)) }
                        " "
                        @if audio {
                            button.seek type="button" data-start=(turn.start)
                                aria-label={ "Play from " (clock(turn.start)) } { (clock(turn.start)) }
                        } @else {
                            span.time { (clock(turn.start)) }
                        }
                    }
                    p.text {
                        @for (text, labels) in pieces(turn, &found) {
                            @if labels.is_empty() { (text) } @else {
                                mark title=(labels.join("; ")) { (text) }
                            }
                        }
                    }
                    @if !found.is_empty() {
                        ul.matched aria-label="Phrase matches" {
                            @for m in &found { li { (m.label) } }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn turn(text: &str, words: Option<Vec<(&str, f64, f64)>>) -> Utterance {
        Utterance {
            speaker: "agent".into(),
            start: 0.5,
            end: 3.0,
            text: text.into(),
            words: words.map(|w| {
                w.into_iter()
                    .map(|(word, start, end)| Word {
                        word: word.into(),
                        start,
                        end,
                    })
                    .collect()
            }),
        }
    }

    fn scorecard(text: &str) -> Map<String, Value> {
        json!({"billing": {
            "Greeting": {"score": 1, "match_data": [
                {"phrase": "thank* you", "matches": [[0.5, 1.0, "agent", text]]},
                {"phrase": "never", "matches": []}
            ]},
            "Sales": {"score": 0, "subcategories": {"Upsell": {"score": 0, "match_data": [
                {"phrase": "help", "matches": [[2.5, 3.0, "agent", text], [9.0, 9.5, "client", "help"]]}
            ]}}}
        }, "broken": {"failed": "over budget"}})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn every_match_is_named_by_its_application_category_and_phrase() {
        let found = matches(&scorecard("x"));
        let labels: Vec<&str> = found.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "billing › Greeting: thank* you",
                "billing › Sales › Upsell: help",
                "billing › Sales › Upsell: help"
            ]
        );
    }

    #[test]
    fn the_words_inside_a_match_are_marked_and_the_rest_is_not() {
        let text = "Thank you for calling, how can I help?";
        let t = turn(
            text,
            Some(vec![
                ("Thank", 0.5, 0.75),
                ("you", 0.75, 1.0),
                ("for", 1.0, 1.25),
                ("calling,", 1.25, 1.5),
                ("how", 1.75, 2.0),
                ("can", 2.0, 2.25),
                ("I", 2.25, 2.5),
                ("help?", 2.5, 3.0),
            ]),
        );
        let all = matches(&scorecard(text));
        let found = of_turn(&t, &all);
        assert_eq!(found.len(), 2, "the client's match is another turn's");
        let got = pieces(&t, &found);
        assert_eq!(
            got,
            vec![
                (
                    "Thank you".to_string(),
                    vec!["billing › Greeting: thank* you"]
                ),
                (" for calling, how can I ".to_string(), vec![]),
                ("help?".to_string(), vec!["billing › Sales › Upsell: help"]),
            ]
        );
        let joined: String = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(joined, text, "the text reads as it was");
    }

    #[test]
    fn a_turn_without_word_times_is_marked_whole() {
        let text = "Thank you, how can I help";
        let t = turn(text, None);
        let all = matches(&scorecard(text));
        let got = pieces(&t, &of_turn(&t, &all));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, text);
        assert_eq!(got[0].1.len(), 2);
        // Words that the text does not hold: marked whole too.
        let t = turn(text, Some(vec![("other", 0.5, 1.0)]));
        assert_eq!(pieces(&t, &of_turn(&t, &all))[0].0, text);
    }

    #[test]
    fn marks_and_text_are_escaped() {
        let text = "<b>help</b>";
        let t = turn(text, None);
        let html = render(&[t], &matches(&scorecard(text)), true).into_string();
        assert!(html.contains("<mark title="), "{html}");
        assert!(html.contains("&lt;b&gt;help&lt;/b&gt;"), "{html}");
        assert!(html.contains("button class=\"seek\""), "{html}");
    }

    #[test]
    fn times_read_as_a_clock() {
        assert_eq!(clock(3.7), "0:03");
        assert_eq!(clock(61.0), "1:01");
        assert_eq!(clock(3725.0), "1:02:05");
    }
}
