//! The snippet of a hit of the embedded index: the passage of its text around the query's words, chosen as
//! tantivy's `SnippetGenerator` chooses it, without its costs per hit.
//!
//! The choice: the text is cut at words into fragments of at most `SNIPPET_CHARS` bytes, each scored by
//! the query's words it holds, a word weighing 1 / (1 + the documents that have it in their text); the
//! best fragment is the snippet, the earliest of equals. Only the passage around the first query word is
//! read (`window`). Tantivy's generator clones its analyzer and allocates every word it reads twice (the
//! analyzer's copy, then a lowercased one); over the 20 hits of a page that was a sixth of a search's time.
//! Here a passage of ASCII only, which is nearly every transcript, is read without the analyzer: its words
//! are then the runs of ASCII letters and digits, compared without regard to case. Other passages go
//! through the analyzer, one per search.

use std::cell::RefCell;
use std::ops::Range;

use tantivy::schema::Field;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Searcher, Term};

use super::{tantivy_error, words as analyzer, LONGEST_WORD};
use crate::search::port::SearchError;
use crate::search::snippet::mark;

/// The longest snippet, in bytes.
const SNIPPET_CHARS: usize = 200;
/// How much of a document's text the snippet is chosen from: from a snippet's length before the first
/// word of the query it holds to this many bytes after that word.
const SNIPPET_WINDOW: usize = 5 * SNIPPET_CHARS;

/// The snippets of one search.
pub(super) struct Snippets {
    /// The query's words as the index holds them that some document's text has (a word no text has
    /// cannot be in a hit's passage), for finding the passage and scoring its fragments.
    words: Vec<String>,
    /// The weight of each of `words`.
    weights: Vec<f32>,
    /// For the texts and passages beyond ASCII.
    analyzer: RefCell<TextAnalyzer>,
}

impl Snippets {
    /// The snippets of a search for `words` (as the index holds them) in the text `field`.
    pub(super) fn new(
        searcher: &Searcher,
        field: Field,
        words: Vec<String>,
    ) -> Result<Self, SearchError> {
        let mut found = Vec::with_capacity(words.len());
        let mut weights = Vec::with_capacity(words.len());
        for word in words {
            let documents = searcher
                .doc_freq(&Term::from_field_text(field, &word))
                .map_err(tantivy_error)?;
            if documents > 0 {
                found.push(word);
                weights.push(1.0 / (1.0 + documents as f32));
            }
        }
        Ok(Self::weighed(found, weights))
    }

    fn weighed(words: Vec<String>, weights: Vec<f32>) -> Self {
        Snippets {
            words,
            weights,
            analyzer: RefCell::new(analyzer()),
        }
    }

    /// The snippet of `text`, escaped and marked; empty when the text has none of the words.
    pub(super) fn of(&self, text: &str) -> String {
        let passage = window(text, &self.words, &mut self.analyzer.borrow_mut());
        let best = if passage.is_ascii() {
            best_fragment(ascii_words(passage).map(|range| {
                let weight = self.ascii_weight(&passage.as_bytes()[range.clone()]);
                (range, weight)
            }))
        } else {
            let mut analyzer = self.analyzer.borrow_mut();
            let mut stream = analyzer.token_stream(passage);
            best_fragment(std::iter::from_fn(|| {
                let token = stream.next()?;
                let weight = self.weight(&token.text);
                Some((token.offset_from..token.offset_to, weight))
            }))
        };
        match best {
            Some(fragment) => {
                let marked: Vec<Range<usize>> = fragment
                    .marked
                    .iter()
                    .map(|range| range.start - fragment.start..range.end - fragment.start)
                    .collect();
                mark(&passage[fragment.start..fragment.stop], &marked)
            }
            None => String::new(),
        }
    }

    fn weight(&self, word: &str) -> Option<f32> {
        let index = self.words.iter().position(|known| known == word)?;
        Some(self.weights[index])
    }

    /// The weight of an ASCII word as the text has it, in any case.
    fn ascii_weight(&self, word: &[u8]) -> Option<f32> {
        let index = self
            .words
            .iter()
            .position(|known| known.as_bytes().eq_ignore_ascii_case(word))?;
        Some(self.weights[index])
    }
}

/// A fragment of the passage: its bytes, its score and its words of the query.
struct Fragment {
    start: usize,
    stop: usize,
    score: f32,
    marked: Vec<Range<usize>>,
}

impl Fragment {
    fn at(start: usize) -> Self {
        Fragment {
            start,
            stop: start,
            score: 0.0,
            marked: Vec::new(),
        }
    }
}

/// The best fragment of a passage given as its words (their bytes, and their weight when they are words
/// of the query): fragments are cut before the word that would take one past `SNIPPET_CHARS` bytes.
fn best_fragment(words: impl Iterator<Item = (Range<usize>, Option<f32>)>) -> Option<Fragment> {
    let mut best: Option<Fragment> = None;
    let mut keep = |fragment: Fragment| {
        // Only a better score replaces: the earliest of equals stays.
        if fragment.score > 0.0 && best.as_ref().is_none_or(|b| fragment.score > b.score) {
            best = Some(fragment);
        }
    };
    let mut current = Fragment::at(0);
    for (range, weight) in words {
        if range.end - current.start > SNIPPET_CHARS {
            keep(std::mem::replace(&mut current, Fragment::at(range.start)));
        }
        current.stop = range.end;
        if let Some(weight) = weight {
            current.score += weight;
            current.marked.push(range);
        }
    }
    keep(current);
    best
}

/// The words of an ASCII text as the analyzer reads them: runs of letters and digits shorter than
/// `LONGEST_WORD` (longer ones it leaves out, and so does this).
fn ascii_words(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || loop {
        let start = at + bytes[at..].iter().position(u8::is_ascii_alphanumeric)?;
        let end = bytes[start..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |length| start + length);
        at = end;
        if end - start < LONGEST_WORD {
            return Some(start..end);
        }
    })
}

/// The passage of `text` a snippet is chosen from: around the first of `words` the text holds (empty
/// when it holds none, the document having matched by its metadata). Scoring every fragment of a
/// 5-minute transcript was a quarter of a search's time, for a passage that is, for a one-word query, the
/// first one anyway.
fn window<'t>(text: &'t str, words: &[String], analyzer: &mut TextAnalyzer) -> &'t str {
    let first = if text.is_ascii() {
        first_ascii_word(text, words)
    } else {
        first_word(text, words, analyzer)
    };
    let Some(at) = first else {
        return "";
    };
    let start = char_start(text, at.saturating_sub(SNIPPET_CHARS));
    let end = char_start(text, at.saturating_add(SNIPPET_WINDOW));
    &text[start..end]
}

/// Where the first word of `text` that is one of `words` starts, as the analyzer reads the text.
fn first_word(text: &str, words: &[String], analyzer: &mut TextAnalyzer) -> Option<usize> {
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        let token = stream.token();
        if words.contains(&token.text) {
            return Some(token.offset_from);
        }
    }
    None
}

/// [`first_word`] for a text of ASCII only, without the analyzer. The query's words are shorter than
/// `LONGEST_WORD`, so one is a word of the text exactly where the lowercased text holds its bytes between
/// two bytes that are neither letters nor digits.
fn first_ascii_word(text: &str, words: &[String]) -> Option<usize> {
    let lower = text.as_bytes().to_ascii_lowercase();
    let word_byte = |at: usize| lower.get(at).is_some_and(u8::is_ascii_alphanumeric);
    words
        .iter()
        .filter_map(|word| {
            memchr::memmem::find_iter(&lower, word.as_bytes()).find(|&at| {
                let joined_before = at > 0 && word_byte(at - 1);
                !joined_before && !word_byte(at + word.len())
            })
        })
        .min()
}

/// The start of the character at byte `at` of `text`, or the text's end.
fn char_start(text: &str, mut at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use tantivy::snippet::SnippetGenerator;

    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    }

    /// Snippets of `words`, weighed as given.
    fn snippets(weights: &[(&str, f32)]) -> Snippets {
        Snippets::weighed(
            weights.iter().map(|&(word, _)| word.to_string()).collect(),
            weights.iter().map(|&(_, weight)| weight).collect(),
        )
    }

    /// What tantivy's generator makes of the same passage with the same weights.
    fn tantivy_snippet(weights: &[(&str, f32)], text: &str) -> String {
        let terms: BTreeMap<String, f32> = weights
            .iter()
            .map(|&(word, weight)| (word.to_string(), weight))
            .collect();
        let words: Vec<String> = terms.keys().cloned().collect();
        let generator =
            SnippetGenerator::new(terms, analyzer(), Field::from_field_id(0), SNIPPET_CHARS);
        let snippet = generator.snippet(window(text, &words, &mut analyzer()));
        if snippet.is_empty() {
            String::new()
        } else {
            mark(snippet.fragment(), snippet.highlighted())
        }
    }

    #[test]
    fn the_passage_is_around_the_first_word_of_the_query_the_text_holds() {
        let words = strings(&["cafe", "refund"]);
        let text = format!(
            "{}Ünïcode {} the Café refund {}",
            "é".repeat(300),
            "x ".repeat(10),
            "y ".repeat(900)
        );
        let passage = window(&text, &words, &mut analyzer());
        assert!(passage.contains("Café refund"), "{passage}");
        assert!(
            passage.starts_with('é') && passage.contains("Ünïcode"),
            "a snippet's length before, on a character"
        );
        assert!(
            // The start moves back to the start of a character: by three bytes at most.
            passage.len() <= SNIPPET_CHARS + SNIPPET_WINDOW + 3,
            "{}",
            passage.len()
        );
        assert!(
            text.len() > passage.len() + 1000,
            "the rest of the text is left out"
        );
        assert_eq!(window("nothing of it", &words, &mut analyzer()), "");
        assert_eq!(
            window("a refund", &words, &mut analyzer()),
            "a refund",
            "a short text whole"
        );
    }

    #[test]
    fn an_ascii_text_is_searched_as_the_analyzer_reads_it() {
        let cases: [(&str, &[&str], Option<usize>); 8] = [
            ("Refund please", &["refund"], Some(0)),
            ("no refunds, one REFUND.", &["refund"], Some(16)),
            ("prerefund refund", &["refund"], Some(10)),
            ("a_refund", &["refund"], Some(2)),
            ("refund2 x", &["refund"], None),
            ("thank you, refund", &["refund", "thank"], Some(0)),
            ("cafe", &["caf\u{e9}"], None),
            ("", &["refund"], None),
        ];
        for (text, list, expected) in cases {
            let list = strings(list);
            assert_eq!(first_ascii_word(text, &list), expected, "{text}");
            assert_eq!(first_word(text, &list, &mut analyzer()), expected, "{text}");
        }
    }

    #[test]
    fn the_best_fragment_is_marked_and_escaped() {
        let snippets = snippets(&[("refund", 0.5), ("router", 0.25)]);
        let text = format!(
            "the ROUTER <b> {} a Refund & the router {}",
            "filler ".repeat(40),
            "tail ".repeat(20)
        );
        let snippet = snippets.of(&text);
        // The second fragment holds both words (0.75) where the first holds one (0.25). Fragments are cut
        // at 200 bytes from where they start, so it starts among the fillers.
        assert!(snippet.starts_with("filler filler"), "{snippet}");
        assert!(
            snippet.contains(" a <em>Refund</em> &amp; the <em>router</em> tail"),
            "{snippet}"
        );
        assert!(!snippet.contains("ROUTER"));
        // At most the fragment's bytes, two marks, and `&` escaped (four bytes more).
        assert!(snippet.len() <= SNIPPET_CHARS + 2 * "<em></em>".len() + 4);
        assert_eq!(snippets.of("no such words"), "");
        assert_eq!(snippets.of("Refund"), "<em>Refund</em>");
    }

    #[test]
    fn a_text_beyond_ascii_goes_through_the_analyzer() {
        let snippets = snippets(&[("cafe", 0.5)]);
        assert_eq!(
            snippets.of("un Café, <s'il>"),
            "un <em>Café</em>, &lt;s&#x27;il",
            "up to the end of the last word"
        );
        assert_eq!(
            snippets.of("ВОДА café"),
            "ВОДА <em>café</em>",
            "a word is marked as the text writes it"
        );
    }

    proptest::proptest! {
        #[test]
        fn the_ascii_search_finds_what_the_analyzer_finds(
            text in "[a-cA-C0-9 ,._-]{0,60}",
            chosen in proptest::collection::vec("[a-c0-9]{1,3}", 1..3),
        ) {
            // Only words the analyzer would give: lowercase runs of letters and digits.
            proptest::prop_assert_eq!(
                first_ascii_word(&text, &chosen),
                first_word(&text, &chosen, &mut analyzer())
            );
        }

        #[test]
        fn snippets_are_the_ones_tantivy_chooses(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("[a-cA-C]{1,3}").unwrap(),
                    proptest::string::string_regex("[a-z0-9]{4,45}").unwrap(),
                    proptest::string::string_regex("[éÉüÜ]{1,2}[ab]?").unwrap(),
                    proptest::string::string_regex("[ ,.&<'\n]{1,3}").unwrap(),
                ],
                0..400,
            ),
            weights in proptest::collection::vec(1u8..5, 4),
        ) {
            let text: String = parts.concat();
            let words = ["a", "bc", "e", "ab"];
            let weights: Vec<(&str, f32)> = words
                .iter()
                .zip(&weights)
                .map(|(&word, &weight)| (word, 1.0 / f32::from(weight)))
                .collect();
            proptest::prop_assert_eq!(snippets(&weights).of(&text), tantivy_snippet(&weights, &text));
        }
    }
}
