//! What one application may hold (docs/scoring.md, Limits), so that the worst call its matcher can be
//! given still scans in bounded time: applications of every company are matched on the same workers.
//! Exact words and words with a literal start or end are found through indexes, whatever their number;
//! a word pattern that starts with a wildcard is looked up by its end, and one that starts and ends with
//! one (`*fee*`) is tried on every distinct word of a call, at a cost that grows with the pattern's and
//! the word's length. Those are bounded hardest.

use phrases::Phrase;

/// The most phrases of one application (all leaves together).
pub const MAX_PHRASES: usize = 10_000;
/// The most word patterns of all its phrases (`a b | c` has three).
pub const MAX_PATTERNS: usize = 50_000;
/// The most `*` and `?` of all its phrases.
pub const MAX_WILDCARDS: usize = 20_000;
/// The most word patterns starting with a wildcard (`*less`, `*fee*`).
pub const MAX_LEADING_WILDCARD: usize = 1_000;
/// The most word patterns starting and ending with a wildcard (`*fee*`, `?*`): tried on every word.
pub const MAX_UNANCHORED: usize = 100;
/// The most characters of all its phrases' texts.
pub const MAX_TEXT_CHARS: usize = 500_000;

/// What the phrases read so far hold, checked against the limits as each is added.
#[derive(Debug, Default)]
pub struct Tally {
    phrases: usize,
    patterns: usize,
    wildcards: usize,
    leading: usize,
    unanchored: usize,
    chars: usize,
}

impl Tally {
    /// Counts a leaf's `count` phrases before they are parsed; the limit it would pass, if any.
    pub fn phrases(&mut self, count: usize) -> Result<(), String> {
        self.phrases += count;
        over(
            self.phrases,
            MAX_PHRASES,
            "an application holds at most {} phrases",
        )
    }

    /// Counts one parsed phrase written as `text`; the limit it passes, if any.
    pub fn phrase(&mut self, text: &str, phrase: &Phrase) -> Result<(), String> {
        self.chars += text.chars().count();
        for pattern in phrase.word_patterns() {
            self.patterns += 1;
            self.wildcards += pattern.matches(['*', '?']).count();
            let leading = pattern.starts_with(['*', '?']);
            self.leading += usize::from(leading);
            self.unanchored += usize::from(leading && pattern.ends_with(['*', '?']));
        }
        over(
            self.chars,
            MAX_TEXT_CHARS,
            "an application's phrases hold at most {} characters in all",
        )?;
        over(
            self.patterns,
            MAX_PATTERNS,
            "an application's phrases hold at most {} words in all",
        )?;
        over(
            self.wildcards,
            MAX_WILDCARDS,
            "an application's phrases hold at most {} wildcards ('*', '?') in all",
        )?;
        over(
            self.leading,
            MAX_LEADING_WILDCARD,
            "an application's phrases hold at most {} words starting with a wildcard",
        )?;
        over(
            self.unanchored,
            MAX_UNANCHORED,
            "an application's phrases hold at most {} words both starting and ending with a wildcard \
             (such as *fee*)",
        )
    }
}

/// The message `template` with `limit` in place of `{}` when `count` is over it.
fn over(count: usize, limit: usize, template: &str) -> Result<(), String> {
    if count > limit {
        Err(template.replacen("{}", &limit.to_string(), 1))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_all(tally: &mut Tally, texts: &[String]) -> Result<(), String> {
        texts
            .iter()
            .try_for_each(|t| tally.phrase(t, &Phrase::parse(t).unwrap()))
    }

    #[test]
    fn words_starting_and_ending_with_a_wildcard_are_bounded_hardest() {
        let mut tally = Tally::default();
        let texts: Vec<String> = (0..MAX_UNANCHORED).map(|i| format!("*w{i}*")).collect();
        add_all(&mut tally, &texts).unwrap();
        let more = add_all(&mut tally, &["?x*".to_string()]).unwrap_err();
        assert!(
            more.contains("at most 100 words both starting and ending"),
            "{more}"
        );
    }

    #[test]
    fn a_leading_wildcard_counts_even_with_a_literal_end() {
        let mut tally = Tally::default();
        let texts: Vec<String> = (0..MAX_LEADING_WILDCARD)
            .map(|i| format!("*w{i}"))
            .collect();
        add_all(&mut tally, &texts).unwrap();
        assert!(add_all(&mut tally, &["*z".to_string()])
            .unwrap_err()
            .contains("starting with a wildcard"));
        // Literal starts are indexed: not counted.
        let mut tally = Tally::default();
        let texts: Vec<String> = (0..MAX_LEADING_WILDCARD + 10)
            .map(|i| format!("fee{i}*"))
            .collect();
        add_all(&mut tally, &texts).unwrap();
    }

    #[test]
    fn alternatives_count_as_the_words_they_hold() {
        let mut tally = Tally::default();
        let wide = (0..40)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join("|");
        let texts = vec![wide; MAX_PATTERNS / 40];
        add_all(&mut tally, &texts).unwrap();
        assert!(add_all(&mut tally, &["one".to_string()])
            .unwrap_err()
            .contains("50000 words"));
    }

    #[test]
    fn phrases_are_counted_per_leaf() {
        let mut tally = Tally::default();
        tally.phrases(MAX_PHRASES).unwrap();
        assert!(tally.phrases(1).unwrap_err().contains("10000 phrases"));
    }
}
