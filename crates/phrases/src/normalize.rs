//! The words of a turn: its text split on whitespace, each token trimmed of the punctuation around it and
//! lowercased. [`normalize_word`] is the definition; [`normalize_into`] and [`split_whitespace`] are the
//! allocation-free versions the compiled matcher runs on every token, and [`ascii_token`] its shortcut for
//! the usual token (ASCII, one word, short), all tested to agree with it.

/// Combining marks (accents written as separate code points): part of a word, like letters.
pub(crate) fn is_mark(c: char) -> bool {
    matches!(
        c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
    )
}

/// The characters a word keeps at its ends: letters, digits and combining marks. Anything else there
/// (punctuation, quotes, symbols) is stripped.
pub(crate) fn is_word_core(c: char) -> bool {
    c.is_alphanumeric() || is_mark(c)
}

/// Lowercases one character of a word or a pattern into `out`; the typographic apostrophe `’` becomes `'`.
pub(crate) fn push_lower(c: char, out: &mut String) {
    if c == '\u{2019}' {
        out.push('\'');
    } else {
        out.extend(c.to_lowercase());
    }
}

/// The normalized form of one whitespace-free token: stripped of leading and trailing characters that are
/// not letters, digits or combining marks, then lowercased character by character (Unicode), with `’` as
/// `'`. Empty when nothing is left.
pub(crate) fn normalize_word(token: &str) -> String {
    let mut out = String::new();
    for c in token.trim_matches(|c: char| !is_word_core(c)).chars() {
        push_lower(c, &mut out);
    }
    out
}

/// [`normalize_word`] into a reused buffer, with a fast path for ASCII tokens.
pub(crate) fn normalize_into(token: &str, out: &mut String) {
    out.clear();
    if token.is_ascii() {
        let bytes = token.as_bytes();
        let Some(first) = bytes.iter().position(u8::is_ascii_alphanumeric) else {
            return;
        };
        let last = bytes
            .iter()
            .rposition(u8::is_ascii_alphanumeric)
            .unwrap_or(first);
        out.push_str(&token[first..=last]);
        out.make_ascii_lowercase();
    } else {
        for c in token.trim_matches(|c: char| !is_word_core(c)).chars() {
            push_lower(c, out);
        }
    }
}

/// What [`ascii_token`] makes of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    /// ASCII without whitespace, normalized to at most 15 bytes: the inline key of that word
    /// ([`crate::hash::inline_key`]).
    Inline(u128),
    /// ASCII without whitespace and no letter or digit: no word.
    Empty,
    /// Anything else (not ASCII, whitespace inside, a longer word, or a token of more than 16 bytes):
    /// normalize it the general way.
    Other,
}

/// The usual token without a loop over its bytes: a token of up to 16 bytes is loaded as one number (64
/// bits up to 8 bytes, most words with their punctuation; 128 bits above) and checked, lowercased and
/// trimmed a byte lane at a time in parallel (SIMD within a register: each lane holds an ASCII byte,
/// below 128, so no sum in these checks carries into the next lane), then shifted to its first letter or
/// digit and cut after its last, which is the word's inline key. A longer token is left to the general
/// path, as its word is nearly always longer than a key.
#[inline(always)]
pub(crate) fn ascii_token(bytes: &[u8]) -> Token {
    match bytes.len() {
        0..=8 => lanes64::token(load64(bytes), bytes.len()),
        9..=16 => lanes128::token(load128(bytes), bytes.len()),
        // Nearly always a word too long for a key, which the general path looks up by its bytes.
        _ => Token::Other,
    }
}

/// The lane-parallel checks of [`ascii_token`], for one width of number.
macro_rules! lanes {
    ($name:ident, $number:ty) => {
        mod $name {
            use super::Token;
            use crate::hash::INLINE;

            /// One in every lane.
            const ONES: $number = <$number>::MAX / 0xFF;
            /// The lanes' high bits.
            const HIGH: $number = ONES * 0x80;
            /// Each lane's low seven bits.
            const LOW: $number = !HIGH;

            /// The high bit of each lane of ASCII bytes `x` holding `b`.
            #[inline]
            fn equal(x: $number, b: u8) -> $number {
                let y = x ^ (ONES * <$number>::from(b));
                // A lane of y is at most 0x7F, so adding 0x7F sets its high bit unless it is 0, and
                // never carries.
                !(y + LOW) & HIGH
            }

            /// The high bit of each lane of ASCII bytes `x` from `low` to `high` (both ASCII).
            #[inline]
            fn within(x: $number, low: u8, high: u8) -> $number {
                // x + (0x80 - low) reaches 0x80 when x >= low; x + (0x7F - high) when x > high.
                // Neither carries.
                let at_least = x + ONES * <$number>::from(0x80 - low);
                let above = x + ONES * <$number>::from(0x7F - high);
                at_least & !above & HIGH
            }

            /// The token of `length` bytes loaded in `x`, zeros after it.
            #[inline]
            pub(super) fn token(x: $number, length: usize) -> Token {
                if x & HIGH != 0 {
                    return Token::Other;
                }
                // Most tokens are lower-case letters only, already their word: every lane of the token
                // a letter, and no other.
                if length <= INLINE {
                    let lanes = HIGH
                        .checked_shr(8 * (<$number>::BITS / 8 - length as u32))
                        .unwrap_or(0);
                    if lanes != 0 && within(x, b'a', b'z') == lanes {
                        return Token::Inline(u128::from(x) | ((length as u128) << (8 * INLINE)));
                    }
                }
                // Lanes past the token hold 0, which is neither a space nor a letter or digit.
                let space = equal(x, b' ') | within(x, b'\t', b'\r');
                if space != 0 {
                    return Token::Other;
                }
                // Setting 0x20 turns upper-case letters into lower-case ones and nothing else into one.
                let letter = within(x | (ONES * 0x20), b'a', b'z');
                let alnum = within(x, b'0', b'9') | letter;
                if alnum == 0 {
                    return Token::Empty;
                }
                let first = alnum.trailing_zeros() / 8;
                let last = (<$number>::BITS - 1 - alnum.leading_zeros()) / 8;
                let length = last + 1 - first;
                if length as usize > INLINE {
                    return Token::Other;
                }
                // Letters gain 0x20, their lane's high bit moved down two places.
                let lowered = x | (letter >> 2);
                let word =
                    (lowered >> (8 * first)) & (<$number>::MAX >> (<$number>::BITS - 8 * length));
                Token::Inline(u128::from(word) | (u128::from(length) << (8 * INLINE)))
            }
        }
    };
}

lanes!(lanes64, u64);
lanes!(lanes128, u128);

/// Up to 8 bytes as a little-endian number, zeros after them: two loads that may overlap, so that no loop
/// runs over the bytes.
#[inline]
fn load64(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let half = |at: usize| {
        let mut four = [0u8; 4];
        four.copy_from_slice(&bytes[at..at + 4]);
        u64::from(u32::from_le_bytes(four))
    };
    // The second load repeats some bytes of the first at their own places: or-ing them changes nothing.
    if n >= 4 {
        half(0) | (half(n - 4) << (8 * (n - 4)))
    } else if n > 0 {
        u64::from(bytes[0])
            | (u64::from(bytes[n / 2]) << (8 * (n / 2)))
            | (u64::from(bytes[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

/// 8 to 16 bytes as a little-endian number, zeros after them, in two loads that may overlap.
#[inline]
fn load128(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    let word = |at: usize| {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(&bytes[at..at + 8]);
        u128::from(u64::from_le_bytes(eight))
    };
    word(0) | (word(n - 8) << (8 * (n - 8)))
}

/// The whitespace characters of ASCII (as `char::is_whitespace` has them: tab, line feed, vertical tab,
/// form feed, carriage return, space).
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// The tokens of a text split on Unicode whitespace, like `str::split_whitespace`, scanning bytes when the
/// text is ASCII.
pub(crate) fn split_whitespace(text: &str) -> Tokens<'_> {
    Tokens {
        text,
        pos: 0,
        unicode: (!text.is_ascii()).then(|| text.split_whitespace()),
    }
}

pub(crate) struct Tokens<'a> {
    text: &'a str,
    pos: usize,
    unicode: Option<std::str::SplitWhitespace<'a>>,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if let Some(split) = &mut self.unicode {
            return split.next();
        }
        let bytes = self.text.as_bytes();
        let mut start = self.pos;
        while start < bytes.len() && is_ascii_space(bytes[start]) {
            start += 1;
        }
        if start == bytes.len() {
            self.pos = start;
            return None;
        }
        let mut end = start + 1;
        while end < bytes.len() && !is_ascii_space(bytes[end]) {
            end += 1;
        }
        self.pos = end;
        Some(&self.text[start..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_outer_punctuation_and_keeps_inner_apostrophes_and_hyphens() {
        assert_eq!(normalize_word("Refund!"), "refund");
        assert_eq!(normalize_word("\"Don't\","), "don't");
        assert_eq!(normalize_word("(E-Mail)"), "e-mail");
        assert_eq!(normalize_word("students'"), "students");
        assert_eq!(normalize_word("'cause"), "cause");
        assert_eq!(normalize_word("U.S.A."), "u.s.a");
        assert_eq!(normalize_word("$100"), "100");
        assert_eq!(normalize_word("--"), "");
        assert_eq!(normalize_word("…"), "");
    }

    #[test]
    fn lowercases_unicode_and_straightens_apostrophes() {
        assert_eq!(normalize_word("ÄRGER"), "ärger");
        assert_eq!(normalize_word("Don’t"), "don't");
        assert_eq!(normalize_word("«Straße»"), "straße");
        // A decomposed accent at the end stays part of the word.
        assert_eq!(normalize_word("CAFE\u{301}."), "cafe\u{301}");
        assert_eq!(normalize_word("İ"), "i\u{307}");
    }

    #[test]
    fn splits_on_every_unicode_space() {
        let text = " a\tb\nc\u{0B}d\u{0C}e\rf  g\u{A0}h\u{2003}i ";
        let ours: Vec<&str> = split_whitespace(text).collect();
        assert_eq!(ours, ["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
        let ascii: Vec<&str> = split_whitespace(" x\u{0B}y  z ").collect();
        assert_eq!(ascii, ["x", "y", "z"]);
        assert_eq!(split_whitespace("   ").count(), 0);
    }

    proptest! {
        #[test]
        fn fast_paths_agree_with_the_definitions(
            text in "[ a-zA-Z0-9'’\\-.,!?\"\t\n\u{0B}\u{A0}\u{2003}äÄßİΣ\u{301}…$*]{0,40}"
        ) {
            let ours: Vec<&str> = split_whitespace(&text).collect();
            let std: Vec<&str> = text.split_whitespace().collect();
            prop_assert_eq!(&ours, &std);
            let mut buf = String::from("stale");
            for token in ours {
                normalize_into(token, &mut buf);
                prop_assert_eq!(&buf, &normalize_word(token));
                check_ascii_token(token)?;
            }
            check_ascii_token(&text)?;
        }

        #[test]
        fn the_ascii_shortcut_agrees_with_the_definition(
            token in "[a-zA-Z0-9'\\-.,!?\"()$*@\\[`{\\x00-\\x1f\\x7f é]{0,24}"
        ) {
            check_ascii_token(&token)?;
        }
    }

    /// [`ascii_token`] gives the inline key of the normalized word, or says there is none, or leaves the
    /// token to the general path only when it must.
    fn check_ascii_token(token: &str) -> Result<(), TestCaseError> {
        let word = normalize_word(token);
        let general = token.is_ascii() && !token.contains(char::is_whitespace);
        match ascii_token(token.as_bytes()) {
            Token::Inline(key) => {
                prop_assert!(general);
                prop_assert_eq!(Some(key), crate::hash::inline_key(&word));
            }
            Token::Empty => {
                prop_assert!(general);
                prop_assert_eq!(word, "");
            }
            Token::Other => {
                prop_assert!(!general || word.len() > crate::hash::INLINE || token.len() > 16)
            }
        }
        Ok(())
    }

    #[test]
    fn the_ascii_shortcut_on_examples() {
        let key = |word: &str| Token::Inline(crate::hash::inline_key(word).unwrap());
        assert_eq!(ascii_token(b"\"Refund!\","), key("refund"));
        assert_eq!(ascii_token(b"U.S.A."), key("u.s.a"));
        assert_eq!(ascii_token(b"fifteen-letters"), key("fifteen-letters"));
        assert_eq!(ascii_token(b"(sixteen-letterss)"), Token::Other);
        assert_eq!(ascii_token(b"sixteen-letterss"), Token::Other);
        assert_eq!(ascii_token(b"...fifteen-letters!!!"), Token::Other);
        assert_eq!(ascii_token(b"fifteen-letters,"), key("fifteen-letters"));
        assert_eq!(ascii_token(b"(Fifteen-Letters"), key("fifteen-letters"));
        assert_eq!(ascii_token(b"A"), key("a"));
        assert_eq!(ascii_token(b"..."), Token::Empty);
        assert_eq!(ascii_token(b""), Token::Empty);
        assert_eq!(ascii_token(b"a b"), Token::Other);
        assert_eq!(ascii_token(b"a\x0bb"), Token::Other);
        assert_eq!(ascii_token("caf\u{e9}".as_bytes()), Token::Other);
    }
}
