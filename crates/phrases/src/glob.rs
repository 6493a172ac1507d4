//! Wildcard matching of one word pattern against one normalized word, as the compiled matcher runs it:
//! over bytes, without allocating, remembering only the last `*` to backtrack to. `*` matches zero or more
//! characters and `?` exactly one character (not one byte).

/// The length in bytes of the UTF-8 character starting with byte `b`.
fn char_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        _ => 2,
    }
}

/// Whether `pattern` (lowercased, with `*` and `?`) matches all of `word`; adds to `steps` the steps it
/// took (at most the pattern's length times the word's), the cost a scan's budget counts.
pub(crate) fn glob_match(pattern: &str, word: &str, steps: &mut u64) -> bool {
    let (p, w) = (pattern.as_bytes(), word.as_bytes());
    let (mut pi, mut wi) = (0, 0);
    // After the last `*` seen: where the pattern goes on, and where in the word that `*` stops for now.
    let mut star: Option<(usize, usize)> = None;
    let mut taken = 0u64;
    while wi < w.len() {
        taken += 1;
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    pi += 1;
                    star = Some((pi, wi));
                    continue;
                }
                b'?' => {
                    pi += 1;
                    wi += char_len(w[wi]);
                    continue;
                }
                b if b == w[wi] => {
                    pi += 1;
                    wi += 1;
                    continue;
                }
                _ => {}
            }
        }
        // Mismatch: let the last `*` take one more character, or fail.
        match star {
            Some((resume, taken)) => {
                let next = taken + char_len(w[taken]);
                star = Some((resume, next));
                pi = resume;
                wi = next;
            }
            None => {
                *steps += taken;
                return false;
            }
        }
    }
    *steps += taken;
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    #[test]
    fn steps_grow_with_backtracking_and_stay_bounded() {
        let mut steps = 0;
        assert!(!super::glob_match("*aab", "aaaaaaaa", &mut steps));
        assert!(steps > 8, "backtracking counts: {steps}");
        assert!(
            steps <= 4 * 8,
            "at most the pattern's length times the word's: {steps}"
        );
        let mut steps = 0;
        assert!(super::glob_match("ab", "ab", &mut steps));
        assert_eq!(steps, 2);
    }

    /// `glob_match` with its steps left uncounted.
    fn glob_match(pattern: &str, word: &str) -> bool {
        super::glob_match(pattern, word, &mut 0)
    }

    #[test]
    fn literals_and_wildcards() {
        assert!(glob_match("refund", "refund"));
        assert!(!glob_match("refund", "refunds"));
        assert!(glob_match("refund*", "refund"));
        assert!(glob_match("refund*", "refunds"));
        assert!(glob_match("*fund", "refund"));
        assert!(!glob_match("*fund", "funds"));
        assert!(glob_match("re?und", "refund"));
        assert!(!glob_match("re?und", "reund"));
        assert!(glob_match("*a*b*", "xaxxbx"));
        assert!(!glob_match("*a*b*", "xbxxax"));
        assert!(glob_match("a*a*a", "aaa"));
        assert!(!glob_match("a*a*a", "aa"));
    }

    #[test]
    fn question_mark_is_one_character_not_one_byte() {
        assert!(glob_match("stra?e", "straße"));
        assert!(glob_match("?rger", "ärger"));
        assert!(!glob_match("??rger", "ärger"));
        assert!(glob_match("*ß*", "straße"));
        assert!(glob_match("caf?", "café"));
        assert!(glob_match("é*", "été"));
        assert!(!glob_match("é", "ê"));
    }
}
