//! The reference matcher: the matching rules of docs/phrases.md as plain loops over one turn's words, with
//! no index and nothing clever, so that it can be read against the documentation. The compiled
//! [`Matcher`](crate::Matcher) must give exactly its answers, which the property tests check. It is slow on
//! long turns and many phrases: use it for checks, not for scoring calls.

use crate::normalize::normalize_word;
use crate::phrase::{Phrase, Seq};
use crate::turn::{PhraseMatch, Speaker, Turn};

/// Whether `phrase`, restricted to `speaker` when given, matches `turn` of a call of `duration` seconds,
/// and where.
pub fn matches(
    phrase: &Phrase,
    speaker: Option<Speaker>,
    turn: &Turn,
    duration: f64,
) -> Option<PhraseMatch> {
    if speaker.is_some_and(|s| s != turn.speaker) {
        return None;
    }
    // `~s<T`: the turn starts before T; `~e<T`: at or after the duration minus T.
    let in_start_window = phrase.start_window.is_none_or(|t| turn.start < t);
    let in_end_window = phrase.end_window.is_none_or(|t| turn.start >= duration - t);
    if !in_start_window || !in_end_window {
        return None;
    }
    let words = words_of(turn);
    // `|`: the first alternative, in textual order, whose every `&` part occurs.
    'alternatives: for alternative in &phrase.alternatives {
        let mut used = Vec::new();
        for seq in alternative {
            match leftmost(seq, &words) {
                Some(positions) => used.extend(positions),
                None => continue 'alternatives,
            }
        }
        let mut found = PhraseMatch {
            start: f64::INFINITY,
            end: f64::NEG_INFINITY,
        };
        for p in used {
            found.start = found.start.min(words[p].start);
            found.end = found.end.max(words[p].end);
        }
        return Some(found);
    }
    None
}

struct Word {
    text: String,
    start: f64,
    end: f64,
}

/// The turn's normalized words with their times: from `words` when present and not empty, else from the
/// text with the turn's times. Tokens that normalize to nothing are not words.
fn words_of(turn: &Turn) -> Vec<Word> {
    let mut words = Vec::new();
    match &turn.words {
        Some(timed) if !timed.is_empty() => {
            for word in timed {
                for token in word.text.split_whitespace() {
                    let text = normalize_word(token);
                    if !text.is_empty() {
                        words.push(Word {
                            text,
                            start: word.start,
                            end: word.end,
                        });
                    }
                }
            }
        }
        _ => {
            for token in turn.text.split_whitespace() {
                let text = normalize_word(token);
                if !text.is_empty() {
                    words.push(Word {
                        text,
                        start: turn.start,
                        end: turn.end,
                    });
                }
            }
        }
    }
    words
}

/// The leftmost occurrence of a sequence: the positions of its patterns' words, with the smallest first
/// position, then the smallest second, and so on.
fn leftmost(seq: &Seq, words: &[Word]) -> Option<Vec<usize>> {
    let mut positions = Vec::new();
    complete(seq, words, &mut positions).then_some(positions)
}

/// Tries every position for the next pattern, in order, and what follows it.
fn complete(seq: &Seq, words: &[Word], positions: &mut Vec<usize>) -> bool {
    let i = positions.len();
    if i == seq.words.len() {
        return true;
    }
    let candidates = match positions.last() {
        // `^`: the first pattern is on the first word.
        None if seq.starts => 0..1,
        None => 0..words.len(),
        // `~N`: within N words after the previous one (N = 1: the next word).
        Some(&previous) => previous + 1..previous + 1 + seq.within as usize,
    };
    for p in candidates {
        if p >= words.len() {
            break;
        }
        if !wildcard_match(&seq.words[i].text, &words[p].text) {
            continue;
        }
        // `$`: the last pattern is on the last word.
        if i + 1 == seq.words.len() && seq.ends && p != words.len() - 1 {
            continue;
        }
        positions.push(p);
        if complete(seq, words, positions) {
            return true;
        }
        positions.pop();
    }
    false
}

/// `*` matches any run of characters, `?` exactly one, any other character itself.
fn wildcard_match(pattern: &str, word: &str) -> bool {
    fn go(p: &[char], w: &[char]) -> bool {
        match p.split_first() {
            None => w.is_empty(),
            Some(('*', rest)) => go(rest, w) || (!w.is_empty() && go(p, &w[1..])),
            Some(('?', rest)) => !w.is_empty() && go(rest, &w[1..]),
            Some((c, rest)) => w.first() == Some(c) && go(rest, &w[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let w: Vec<char> = word.chars().collect();
    go(&p, &w)
}

#[cfg(test)]
mod tests {
    use super::wildcard_match;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("re*", "re"));
        assert!(wildcard_match("re*", "refund"));
        assert!(wildcard_match("*d", "refund"));
        assert!(wildcard_match("r?f*d", "refund"));
        assert!(!wildcard_match("r?f*d", "rfund"));
        assert!(wildcard_match("stra?e", "straße"));
        assert!(!wildcard_match("refund", "refunds"));
    }
}
