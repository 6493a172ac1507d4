//! Snippets as both search adapters return them: the passage escaped for HTML, the matched words wrapped
//! in `<em>`…`</em>`, so a page can show one as it comes without the transcript injecting markup.

use std::ops::Range;

pub(crate) const MARK_START: &str = "<em>";
pub(crate) const MARK_END: &str = "</em>";

/// `passage` escaped, its byte `ranges` marked. Ranges out of order, overlapping, out of bounds or not on
/// character boundaries are skipped rather than trusted.
pub(crate) fn mark(passage: &str, ranges: &[Range<usize>]) -> String {
    let mut sorted = ranges.to_vec();
    sorted.sort_by_key(|range| (range.start, range.end));
    let mut html = String::with_capacity(passage.len() + 16);
    let mut done = 0;
    for range in sorted {
        let usable =
            range.start >= done && range.start < range.end && passage.get(range.clone()).is_some();
        if !usable {
            continue;
        }
        escape_into(&mut html, &passage[done..range.start]);
        html.push_str(MARK_START);
        escape_into(&mut html, &passage[range.clone()]);
        html.push_str(MARK_END);
        done = range.end;
    }
    escape_into(&mut html, &passage[done..]);
    html
}

fn escape_into(html: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => html.push_str("&amp;"),
            '<' => html.push_str("&lt;"),
            '>' => html.push_str("&gt;"),
            '"' => html.push_str("&quot;"),
            '\'' => html.push_str("&#x27;"),
            c => html.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mark;

    #[test]
    fn marks_ranges_and_escapes_the_rest() {
        let passage = "a <b> & café said 'hi'";
        let cafe = passage.find("café").unwrap();
        assert_eq!(
            mark(passage, &[cafe..cafe + "café".len(), 0..1]),
            "<em>a</em> &lt;b&gt; &amp; <em>café</em> said &#x27;hi&#x27;"
        );
    }

    #[test]
    fn skips_ranges_it_cannot_trust() {
        // Inside a character, backwards, past the end, overlapping a range already marked.
        let backwards = std::ops::Range { start: 4, end: 2 };
        assert_eq!(
            mark("héllo", &[1..2, backwards, 3..99, 0..1, 0..2]),
            "<em>h</em>éllo"
        );
    }
}
