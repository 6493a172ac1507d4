//! The URL-encoded forms of a `/track` body, decoded as they are read rather than into a copy: the JSON
//! object encoded as the whole body, or a form whose field `events` holds it (or its array). Decoding
//! follows `application/x-www-form-urlencoded` (`+` is a space, `%XX` a byte, a `%` without two hex
//! digits itself).

use std::io::{self, BufRead, Read};

/// What a form body holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The whole body, decoded, is the JSON.
    Whole,
    /// The JSON is the value of the field `events`.
    Field,
}

/// The raw bytes read before a decision are kept up to this many: a first key that is nothing but
/// encoded whitespace for longer is not a batch.
const MAX_UNDECIDED: usize = 4096;

/// Tells the two forms apart by the first key: when its first character other than whitespace is `{`
/// or `[`, the whole body is the JSON. Gives back the bytes it read, to be read again before `body`.
pub fn shape(body: &mut impl BufRead) -> io::Result<(Shape, Vec<u8>)> {
    let mut read = Vec::new();
    let mut decoder = Decoder::default();
    loop {
        if read.len() > MAX_UNDECIDED {
            return Ok((Shape::Field, read));
        }
        let Some(byte) = next(body)? else {
            return Ok((Shape::Field, read));
        };
        read.push(byte);
        if byte == b'=' || byte == b'&' {
            return Ok((Shape::Field, read));
        }
        for decoded in decoder.push(byte) {
            match decoded {
                b' ' | b'\t' | b'\n' | b'\r' => {}
                b'{' | b'[' => return Ok((Shape::Whole, read)),
                _ => return Ok((Shape::Field, read)),
            }
        }
    }
}

/// Moves `body` to the start of the value of the first field named `events`; false when there is none.
pub fn find_events(body: &mut impl BufRead) -> io::Result<bool> {
    const NAME: &[u8] = b"events";
    loop {
        // The key, decoded as far as it can still be `events`.
        let mut key = Vec::with_capacity(NAME.len());
        let mut too_long = false;
        let mut decoder = Decoder::default();
        let ended_by = loop {
            let Some(byte) = next(body)? else {
                return Ok(false);
            };
            let decoded = if byte == b'=' || byte == b'&' {
                decoder.finish()
            } else {
                decoder.push(byte)
            };
            for decoded in decoded {
                if key.len() < NAME.len() {
                    key.push(decoded);
                } else {
                    too_long = true;
                }
            }
            if byte == b'=' || byte == b'&' {
                break byte;
            }
        };
        if ended_by == b'=' {
            if key == NAME && !too_long {
                return Ok(true);
            }
            // Skip the value.
            while let Some(byte) = next(body)? {
                if byte == b'&' {
                    break;
                }
            }
        }
    }
}

/// The decoded bytes of `body`, up to the first `&` when `field` (the end of a field's value) or to its
/// end.
pub struct Decoding<R> {
    body: R,
    field: bool,
    decoder: Decoder,
    /// Decoded bytes not yet handed out.
    ready: Vec<u8>,
    done: bool,
}

impl<R: BufRead> Decoding<R> {
    pub fn new(body: R, field: bool) -> Decoding<R> {
        Decoding {
            body,
            field,
            decoder: Decoder::default(),
            ready: Vec::new(),
            done: false,
        }
    }
}

impl<R: BufRead> Read for Decoding<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut written = 0;
        while written < out.len() {
            if !self.ready.is_empty() {
                let n = self.ready.len().min(out.len() - written);
                out[written..written + n].copy_from_slice(&self.ready[..n]);
                self.ready.drain(..n);
                written += n;
                continue;
            }
            if self.done {
                break;
            }
            match next(&mut self.body)? {
                Some(b'&') if self.field => {
                    self.ready.extend(self.decoder.finish());
                    self.done = true;
                }
                Some(byte) => self.ready.extend(self.decoder.push(byte)),
                None => {
                    self.ready.extend(self.decoder.finish());
                    self.done = true;
                }
            }
        }
        Ok(written)
    }
}

fn next(body: &mut impl BufRead) -> io::Result<Option<u8>> {
    let byte = body.fill_buf()?.first().copied();
    if byte.is_some() {
        body.consume(1);
    }
    Ok(byte)
}

/// Percent-decoding one byte at a time: a `%` waits for the two bytes after it.
#[derive(Default)]
struct Decoder {
    /// `%` and up to one hex digit after it, not decided yet.
    held: Vec<u8>,
}

impl Decoder {
    /// The decoded bytes that `byte` completes.
    fn push(&mut self, byte: u8) -> Vec<u8> {
        if self.held.is_empty() {
            return match byte {
                b'%' => {
                    self.held.push(byte);
                    Vec::new()
                }
                b'+' => vec![b' '],
                other => vec![other],
            };
        }
        if !byte.is_ascii_hexdigit() {
            // `%` (and a digit) without two hex digits stand for themselves; `byte` starts afresh.
            let mut out = std::mem::take(&mut self.held);
            out.extend(self.push(byte));
            return out;
        }
        if self.held.len() == 1 {
            self.held.push(byte);
            return Vec::new();
        }
        let high = hex(self.held[1]);
        self.held.clear();
        vec![high << 4 | hex(byte)]
    }

    /// What is left held at the end: a `%` sequence cut short, itself.
    fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

fn hex(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        _ => digit - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(body: &str, field: bool) -> String {
        let mut out = String::new();
        Decoding::new(body.as_bytes(), field)
            .read_to_string(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn decodes_as_form_urlencoded_does() {
        for text in [
            "a+b%20c%7B%22x%22%3A1%7D",
            "100%+sure %4 %zz %%41 %4",
            "%C3%BC=%3d&x",
            "%",
            "%4&x=%=1",
        ] {
            let expected: String = url::form_urlencoded::parse(text.as_bytes())
                .map(|(k, v)| {
                    if v.is_empty() {
                        k.into_owned()
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect::<Vec<_>>()
                .join("&");
            assert_eq!(decoded(text, false), expected, "{text}");
        }
        assert_eq!(decoded("%5B1%5D&other=2", true), "[1]");
        assert_eq!(decoded("1%4&other=2", true), "1%4");
    }

    #[test]
    fn the_first_key_tells_the_shape() {
        let shape_of = |body: &str| shape(&mut body.as_bytes()).unwrap().0;
        assert_eq!(shape_of("%7B%22events%22"), Shape::Whole);
        assert_eq!(shape_of("+%20%5B1%5D"), Shape::Whole);
        assert_eq!(shape_of("events=%7B"), Shape::Field);
        assert_eq!(shape_of("other=1&events=%5B"), Shape::Field);
        assert_eq!(shape_of("=%7B"), Shape::Field);
        assert_eq!(shape_of(""), Shape::Field);
        let (_, read) = shape(&mut "ev%65nts=1".as_bytes()).unwrap();
        assert_eq!(read, b"e", "only what the decision needed");
    }

    #[test]
    fn the_events_field_is_found_among_others() {
        let value_after = |body: &str| {
            let mut body = body.as_bytes();
            find_events(&mut body)
                .unwrap()
                .then(|| String::from_utf8(body.to_vec()).unwrap())
        };
        assert_eq!(value_after("events=%5B%5D").as_deref(), Some("%5B%5D"));
        assert_eq!(
            value_after("a=1&b&ev%65nts=x&events=y").as_deref(),
            Some("x&events=y")
        );
        assert_eq!(value_after("eventsx=1&xevents=2&events"), None);
        assert_eq!(value_after("hello=world"), None);
    }
}
