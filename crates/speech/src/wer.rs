//! Word error rate: how far a recognizer's words are from a reference, for the tests and the benchmark
//! (docs/benchmarks.md). Both texts are compared as lower-case words; markers such as `<s>`, `</s>`,
//! `[NOISE]` and the `(utterance-id)` of a Sphinx transcription file are not words.

/// The words of a text as they are compared: lower case, punctuation around them removed (inner
/// apostrophes kept: `don't`), markers left out.
pub fn normalize(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|token| !token.starts_with(['<', '[', '(']))
        .map(|token| {
            token
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|word| !word.is_empty())
        .collect()
}

/// The word-level edit distance (substitutions, deletions, insertions) between the two texts, and the
/// number of reference words. Summing both over many recordings gives the corpus's error rate.
pub fn word_errors(reference: &str, hypothesis: &str) -> (usize, usize) {
    let reference = normalize(reference);
    let hypothesis = normalize(hypothesis);
    // One row of the Levenshtein table at a time.
    let mut previous: Vec<usize> = (0..=hypothesis.len()).collect();
    let mut current = vec![0; hypothesis.len() + 1];
    for (i, r) in reference.iter().enumerate() {
        current[0] = i + 1;
        for (j, h) in hypothesis.iter().enumerate() {
            let substitution = previous[j] + usize::from(r != h);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    (previous[hypothesis.len()], reference.len())
}

/// The word error rate of one hypothesis: edits / reference words (0 for an empty reference matched by
/// an empty hypothesis, 1 per inserted word when the reference is empty).
pub fn wer(reference: &str, hypothesis: &str) -> f64 {
    let (errors, words) = word_errors(reference, hypothesis);
    if words == 0 {
        return errors as f64;
    }
    errors as f64 / words as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_edits() {
        assert_eq!(word_errors("a b c", "a b c"), (0, 3));
        assert_eq!(word_errors("a b c", "a x c"), (1, 3));
        assert_eq!(word_errors("a b c", "a c"), (1, 3));
        assert_eq!(word_errors("a b c", "a b b c"), (1, 3));
        assert_eq!(word_errors("a b c", ""), (3, 3));
        assert_eq!(word_errors("", "a"), (1, 0));
        assert_eq!(word_errors("kitten sat", "sitting sat down"), (2, 2));
        assert!((wer("the cat sat on the mat", "the cat sat on mat") - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(wer("", ""), 0.0);
    }

    #[test]
    fn normalizes() {
        assert_eq!(
            normalize("<s> He was NOT, an ill-disposed man. </s> (file-0880)"),
            vec!["he", "was", "not", "an", "ill-disposed", "man"]
        );
        assert_eq!(
            normalize("don't [NOISE] <sil> stop!"),
            vec!["don't", "stop"]
        );
        assert_eq!(wer("And Mr John", "and mr john"), 0.0);
    }
}
