//! The parser of phrase text (docs/phrases.md, Grammar): one pass over the characters, building the
//! [`Phrase`] tree and refusing anything outside the grammar with a [`PhraseError`] that points at the
//! character where it went wrong.

use crate::error::PhraseError;
use crate::normalize::{is_word_core, push_lower};
use crate::phrase::{Pattern, Phrase, Seq};

/// The longest phrase, in characters.
pub const MAX_PHRASE_CHARS: usize = 250;

/// The largest N of `~N`.
pub const MAX_WITHIN: u32 = 50;

type Result<T> = std::result::Result<T, PhraseError>;

pub(crate) fn parse(text: &str) -> Result<Phrase> {
    let chars: Vec<char> = text.chars().collect();
    let parser = Parser {
        text,
        chars,
        pos: 0,
    };
    if parser.chars.len() > MAX_PHRASE_CHARS {
        let reason = format!(
            "longer than {MAX_PHRASE_CHARS} characters ({})",
            parser.chars.len()
        );
        return parser.fail(MAX_PHRASE_CHARS, reason);
    }
    parser.phrase()
}

/// The characters that are operators, so never part of a word.
fn is_operator(c: char) -> bool {
    matches!(c, '|' | '&' | '~' | '^' | '$')
}

/// The characters a word pattern may hold.
fn is_pattern_char(c: char) -> bool {
    is_word_core(c) || matches!(c, '\'' | '\u{2019}' | '-' | '*' | '?')
}

/// `^\d+(\.\d+)?$` as a positive number of seconds.
fn seconds(text: &str) -> Option<f64> {
    let mut halves = text.splitn(2, '.');
    let whole = halves.next().unwrap_or("");
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = digits(whole) && halves.next().is_none_or(digits);
    let value: f64 = text.parse().ok().filter(|_| well_formed)?;
    (value > 0.0 && value.is_finite()).then_some(value)
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser<'_> {
    fn fail<T>(&self, position: usize, reason: impl Into<String>) -> Result<T> {
        Err(PhraseError::new(self.text, position, reason))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, position: usize) -> Option<char> {
        self.chars.get(position).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// `phrase := ['-'] body windows`, `body := all ('|' all)*`, `all := seq ('&' seq)*`.
    fn phrase(mut self) -> Result<Phrase> {
        self.skip_spaces();
        if self.peek().is_none() {
            return self.fail(0, "empty phrase");
        }
        let exclude = self.peek() == Some('-');
        // The operator before the sequence to parse, for the message when it is missing.
        let mut before = None;
        if exclude {
            self.pos += 1;
            before = Some('-');
        }
        let mut alternatives = Vec::new();
        let mut parts = Vec::new();
        loop {
            parts.push(self.seq(before)?);
            match self.peek() {
                Some(op @ ('&' | '|')) => {
                    if op == '|' {
                        alternatives.push(std::mem::take(&mut parts));
                    }
                    self.pos += 1;
                    before = Some(op);
                }
                None | Some('~') => {
                    alternatives.push(parts);
                    let (start_window, end_window) = self.windows()?;
                    return Ok(Phrase {
                        exclude,
                        alternatives,
                        start_window,
                        end_window,
                    });
                }
                Some(c) => return self.fail(self.pos, format!("unexpected character '{c}'")),
            }
        }
    }

    /// `seq := ['^'] pattern+ ['$'] ['~' N]`, and the spaces after it.
    fn seq(&mut self, before: Option<char>) -> Result<Seq> {
        self.skip_spaces();
        let starts = self.peek() == Some('^');
        if starts {
            self.pos += 1;
            self.skip_spaces();
        }
        let mut words = Vec::new();
        while self.peek().is_some_and(|c| !is_operator(c)) {
            words.push(self.pattern()?);
            self.skip_spaces();
        }
        if words.is_empty() {
            return match (self.peek(), before) {
                (Some('$'), _) => self.misplaced_dollar(self.pos),
                (Some('^'), _) => self.misplaced_caret(self.pos),
                _ if starts => self.fail(self.pos, "nothing after '^'"),
                (_, Some(op)) => self.fail(self.pos, format!("nothing after '{op}'")),
                (Some(next), None) => self.fail(self.pos, format!("nothing before '{next}'")),
                (None, None) => self.fail(0, "empty phrase"),
            };
        }
        if self.peek() == Some('^') {
            return self.misplaced_caret(self.pos);
        }
        let ends = self.peek() == Some('$');
        if ends {
            let dollar = self.pos;
            self.pos += 1;
            self.skip_spaces();
            match self.peek() {
                Some('^') => return self.misplaced_caret(self.pos),
                Some('$') => return self.misplaced_dollar(self.pos),
                Some(c) if !is_operator(c) => return self.misplaced_dollar(dollar),
                _ => {}
            }
        }
        let mut within = 1;
        if self.peek() == Some('~')
            && self
                .peek_at(self.pos + 1)
                .is_some_and(|c| c.is_ascii_digit())
        {
            let tilde = self.pos;
            self.pos += 1;
            let digits_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
            if words.len() < 2 {
                return self.fail(tilde, "'~N' needs at least two words before it");
            }
            let digits: String = self.chars[digits_start..self.pos].iter().collect();
            match digits.parse::<u32>() {
                Ok(n) if (1..=MAX_WITHIN).contains(&n) => within = n,
                _ => {
                    let reason =
                        format!("the N of '~N' must be from 1 to {MAX_WITHIN}, not {digits}");
                    return self.fail(digits_start, reason);
                }
            }
            self.skip_spaces();
            match self.peek() {
                None | Some('|' | '&' | '~') => {}
                Some('$') => {
                    return self.fail(self.pos, "misplaced '$': it must come before '~N'");
                }
                Some('^') => return self.misplaced_caret(self.pos),
                Some(c) => {
                    return self.fail(self.pos, format!("unexpected '{c}' after '~{within}'"));
                }
            }
        }
        Ok(Seq {
            starts,
            ends,
            words,
            within,
        })
    }

    fn misplaced_caret<T>(&self, position: usize) -> Result<T> {
        self.fail(
            position,
            "misplaced '^': it must come before the first word of a sequence",
        )
    }

    fn misplaced_dollar<T>(&self, position: usize) -> Result<T> {
        self.fail(
            position,
            "misplaced '$': it must follow the last word of a sequence",
        )
    }

    /// One word pattern: letters, digits, combining marks, `'`, `-`, `*` and `?`, with at least one letter
    /// or digit, neither starting nor ending with `'` or `-`; lowercased.
    fn pattern(&mut self) -> Result<Pattern> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && !is_operator(c))
        {
            self.pos += 1;
        }
        let run = &self.chars[start..self.pos];
        if let Some(i) = run.iter().position(|&c| !is_pattern_char(c)) {
            return self.fail(start + i, format!("unexpected character '{}'", run[i]));
        }
        if !run.iter().any(|c| c.is_alphanumeric()) {
            return self.fail(start, "a word needs a letter or a digit");
        }
        let edge = |c: char| match c {
            '-' => Some("'-'"),
            '\'' | '\u{2019}' => Some("an apostrophe"),
            _ => None,
        };
        if let Some(what) = edge(run[0]) {
            return self.fail(start, format!("a word cannot start with {what}"));
        }
        if let Some(what) = edge(run[run.len() - 1]) {
            return self.fail(self.pos - 1, format!("a word cannot end with {what}"));
        }
        let mut text = String::new();
        for &c in run {
            push_lower(c, &mut text);
        }
        Ok(Pattern { text })
    }

    /// `windows := ('~s<' T | '~e<' T)*`, at most one of each, up to the end.
    fn windows(&mut self) -> Result<(Option<f64>, Option<f64>)> {
        let (mut start, mut end) = (None, None);
        loop {
            self.skip_spaces();
            let Some(c) = self.peek() else {
                return Ok((start, end));
            };
            let tilde = self.pos;
            if c != '~' {
                let reason =
                    format!("unexpected '{c}' after a time window (time windows come last)");
                return self.fail(tilde, reason);
            }
            let which = match (self.peek_at(tilde + 1), self.peek_at(tilde + 2)) {
                (Some(w @ ('s' | 'e')), Some('<')) => w,
                _ => {
                    return self.fail(
                        tilde,
                        "bad '~': expected '~N' right after two or more words, or a time window '~s<T' or '~e<T'",
                    );
                }
            };
            self.pos = tilde + 3;
            let number_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                self.pos += 1;
            }
            let number: String = self.chars[number_start..self.pos].iter().collect();
            let Some(value) = seconds(&number) else {
                let reason =
                    format!("bad time after '~{which}<': expected a positive number of seconds");
                return self.fail(number_start, reason);
            };
            let slot = if which == 's' { &mut start } else { &mut end };
            if slot.is_some() {
                return self.fail(tilde, format!("a second '~{which}' window"));
            }
            *slot = Some(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        match Phrase::parse(text) {
            Ok(phrase) => phrase.to_string(),
            Err(e) => panic!("{e}"),
        }
    }

    fn error(text: &str) -> String {
        match Phrase::parse(text) {
            Ok(phrase) => panic!("{text:?} parsed as {phrase}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn words_are_lowercased_and_spaces_normalized() {
        assert_eq!(canonical("  Refund   PLEASE "), "refund please");
        assert_eq!(canonical("Don’t E-Mail"), "don't e-mail");
        assert_eq!(canonical("ÄRGER"), "ärger");
        assert_eq!(canonical("re?und* *fund"), "re?und* *fund");
        assert_eq!(canonical("x1 42"), "x1 42");
    }

    #[test]
    fn operators_and_their_spacing() {
        assert_eq!(canonical("a|b&c d"), "a | b & c d");
        assert_eq!(canonical("a  |  b  &  c"), "a | b & c");
        assert_eq!(canonical("^ a b $"), "^a b$");
        assert_eq!(canonical("^a b$~3"), "^a b$~3");
        assert_eq!(canonical("a b $ ~3 & c"), "a b$~3 & c");
        assert_eq!(canonical("a b ~3|c d~50"), "a b~3 | c d~50");
        assert_eq!(canonical("a b~1"), "a b");
        assert_eq!(canonical("a b~03"), "a b~3");
    }

    #[test]
    fn exclude_mark() {
        let phrase = Phrase::parse("-refund").unwrap();
        assert!(phrase.is_exclude());
        assert!(!Phrase::parse("refund").unwrap().is_exclude());
        assert_eq!(canonical("  - refund | fee"), "-refund | fee");
        // An inner hyphen is part of the word, not an exclude mark.
        assert!(!Phrase::parse("e-mail").unwrap().is_exclude());
    }

    #[test]
    fn time_windows() {
        let phrase = Phrase::parse("hello ~s<30").unwrap();
        assert_eq!(phrase.start_window(), Some(30.0));
        assert_eq!(phrase.end_window(), None);
        let phrase = Phrase::parse("bye~e<12.5~s<600").unwrap();
        assert_eq!(phrase.start_window(), Some(600.0));
        assert_eq!(phrase.end_window(), Some(12.5));
        assert_eq!(phrase.to_string(), "bye ~s<600 ~e<12.5");
        assert_eq!(canonical("a b~2 ~s<1.50"), "a b~2 ~s<1.5");
        assert_eq!(canonical("a | b ~e<007"), "a | b ~e<7");
        assert_eq!(
            canonical("  -Refund|MONEY  back ~e<060 ~s<1.50"),
            "-refund | money back ~s<1.5 ~e<60"
        );
    }

    #[test]
    fn length_limit_counts_characters() {
        let at_limit = format!("{} b", "ä".repeat(MAX_PHRASE_CHARS - 2));
        assert_eq!(at_limit.chars().count(), 250);
        assert!(at_limit.len() > 250);
        assert!(Phrase::parse(&at_limit).is_ok());
        let over = format!("{at_limit}c");
        let e = Phrase::parse(&over).unwrap_err();
        assert_eq!(e.position(), 250);
        assert_eq!(e.reason(), "longer than 250 characters (251)");
        assert_eq!(e.phrase(), over);
    }

    #[test]
    fn error_messages_and_positions() {
        let cases = [
            ("refund & ", "nothing after '&' at position 9"),
            ("", "empty phrase at position 0"),
            ("   ", "empty phrase at position 0"),
            ("-", "nothing after '-' at position 1"),
            ("- | a", "nothing after '-' at position 2"),
            ("| a", "nothing before '|' at position 0"),
            ("a |", "nothing after '|' at position 3"),
            ("a | | b", "nothing after '|' at position 4"),
            ("a & | b", "nothing after '&' at position 4"),
            ("&a", "nothing before '&' at position 0"),
            ("~s<3", "nothing before '~' at position 0"),
            ("^", "nothing after '^' at position 1"),
            ("a & ^ | b", "nothing after '^' at position 6"),
            ("a ^b", "misplaced '^': it must come before the first word of a sequence at position 2"),
            ("^^a", "misplaced '^': it must come before the first word of a sequence at position 1"),
            ("a$ b", "misplaced '$': it must follow the last word of a sequence at position 1"),
            ("$a", "misplaced '$': it must follow the last word of a sequence at position 0"),
            ("a$$", "misplaced '$': it must follow the last word of a sequence at position 2"),
            ("a$^", "misplaced '^': it must come before the first word of a sequence at position 2"),
            ("a b~3$", "misplaced '$': it must come before '~N' at position 5"),
            ("a~3", "'~N' needs at least two words before it at position 1"),
            ("a b~0", "the N of '~N' must be from 1 to 50, not 0 at position 4"),
            ("a b~51", "the N of '~N' must be from 1 to 50, not 51 at position 4"),
            ("a b~99999999999", "the N of '~N' must be from 1 to 50, not 99999999999 at position 4"),
            ("a b~3c", "unexpected 'c' after '~3' at position 5"),
            ("a b~3 c", "unexpected 'c' after '~3' at position 6"),
            ("a b~3 ^c", "misplaced '^': it must come before the first word of a sequence at position 6"),
            ("a ~", "bad '~': expected '~N' right after two or more words, or a time window '~s<T' or '~e<T' at position 2"),
            ("a ~x<3", "bad '~': expected '~N' right after two or more words, or a time window '~s<T' or '~e<T' at position 2"),
            ("a ~s3", "bad '~': expected '~N' right after two or more words, or a time window '~s<T' or '~e<T' at position 2"),
            ("a b ~s<3 ~2", "bad '~': expected '~N' right after two or more words, or a time window '~s<T' or '~e<T' at position 9"),
            ("a ~s<", "bad time after '~s<': expected a positive number of seconds at position 5"),
            ("a ~s<0", "bad time after '~s<': expected a positive number of seconds at position 5"),
            ("a ~e<0.0", "bad time after '~e<': expected a positive number of seconds at position 5"),
            ("a ~e<1.", "bad time after '~e<': expected a positive number of seconds at position 5"),
            ("a ~e<.5", "bad time after '~e<': expected a positive number of seconds at position 5"),
            ("a ~e<1.2.3", "bad time after '~e<': expected a positive number of seconds at position 5"),
            ("a ~s<3 ~s<4", "a second '~s' window at position 7"),
            ("a ~e<3~e<4", "a second '~e' window at position 6"),
            ("a ~s<3 b", "unexpected 'b' after a time window (time windows come last) at position 7"),
            ("a ~s<3 & b", "unexpected '&' after a time window (time windows come last) at position 7"),
            ("a ~s<30s", "unexpected 's' after a time window (time windows come last) at position 7"),
            ("refund!", "unexpected character '!' at position 6"),
            ("a (b)", "unexpected character '(' at position 2"),
            ("a <b", "unexpected character '<' at position 2"),
            ("a.b", "unexpected character '.' at position 1"),
            ("*", "a word needs a letter or a digit at position 0"),
            ("a ?* b", "a word needs a letter or a digit at position 2"),
            ("a - b", "a word needs a letter or a digit at position 2"),
            ("--a", "a word cannot start with '-' at position 1"),
            ("a- b", "a word cannot end with '-' at position 1"),
            ("'cause", "a word cannot start with an apostrophe at position 0"),
            ("students’", "a word cannot end with an apostrophe at position 8"),
            ("ä ü !", "unexpected character '!' at position 4"),
        ];
        for (text, expected) in cases {
            assert_eq!(
                error(text),
                format!("invalid phrase {text:?}: {expected}"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn error_accessors() {
        let e = Phrase::parse("refund & ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid phrase \"refund & \": nothing after '&' at position 9"
        );
        assert_eq!(e.position(), 9);
        assert_eq!(e.reason(), "nothing after '&'");
        assert_eq!(e.phrase(), "refund & ");
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().starts_with("invalid phrase"));
    }
}
