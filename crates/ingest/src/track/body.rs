//! Reading a `/track` body into the batch's events, whatever way it was sent (docs/ingest-api.md,
//! Sending events): the URL-encoded JSON object `{"events": [...]}` as the whole form body, a form field
//! `events` holding that object or its array, or the raw JSON object; any of them gzip-compressed. The
//! body is inflated, decoded and parsed as one stream, never copied whole: inflating stops past
//! `max_inflated` bytes, parsing at event 301 (`batch`). Every failure is a message for the sender's
//! `results.error`, never an HTTP error.

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, Read};

use serde_json::Value;

use super::batch::{self, Stop};
use super::form::{self, Shape};

pub use super::batch::MAX_BATCH;

/// A batch refused whole, and how many of its events were read before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub message: String,
    /// 0, or `MAX_BATCH + 1` when the batch held more than [`MAX_BATCH`] (it is not read further).
    pub events: usize,
}

impl Refused {
    fn new(message: impl Into<String>) -> Refused {
        Refused {
            message: message.into(),
            events: 0,
        }
    }
}

/// The events of a batch, still unchecked, in the order sent: at most [`MAX_BATCH`].
pub fn events(body: &[u8], gzip: bool, max_inflated: usize) -> Result<Vec<Value>, Refused> {
    if gzip || body.starts_with(&[0x1f, 0x8b]) {
        let inflated = Inflated {
            inner: flate2::read::MultiGzDecoder::new(body),
            left: max_inflated,
            max: max_inflated,
        };
        return text(BufReader::new(inflated));
    }
    let body = body.trim_ascii_start();
    if body.starts_with(b"{") || body.starts_with(b"[") {
        // Raw JSON as sent: parsed in place.
        return parse(serde_json::de::SliceRead::new(body));
    }
    text(body)
}

/// A body as text (inflated when it was gzip): JSON, or one of the URL-encoded forms.
fn text(mut body: impl BufRead) -> Result<Vec<Value>, Refused> {
    let (first, not_utf8) = loop {
        let buffer = body.fill_buf().map_err(read_error)?;
        let blanks = buffer
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        if blanks > 0 {
            body.consume(blanks);
            continue;
        }
        let not_utf8 = match std::str::from_utf8(buffer) {
            // Not merely a character cut by the end of what is buffered.
            Err(e) if e.error_len().is_some() => Some(e),
            _ => None,
        };
        break (buffer.first().copied(), not_utf8);
    };
    match first {
        None => return Err(Refused::new("the body is empty: send {\"events\": [...]}")),
        Some(b'{' | b'[') => return parse(serde_json::de::IoRead::new(body)),
        Some(_) => {}
    }
    if let Some(e) = not_utf8 {
        return Err(Refused::new(format!("the body is not UTF-8: {e}")));
    }
    let (shape, read) = form::shape(&mut body).map_err(read_error)?;
    let mut body = io::Cursor::new(read).chain(body);
    let field =
        match shape {
            Shape::Whole => false,
            Shape::Field if form::find_events(&mut body).map_err(read_error)? => true,
            Shape::Field => return Err(Refused::new(
                "the body is neither JSON, URL-encoded JSON nor a form with an \"events\" field",
            )),
        };
    let json = BufReader::new(form::Decoding::new(body, field));
    parse(serde_json::de::IoRead::new(json))
}

fn parse<'de, R: serde_json::de::Read<'de>>(read: R) -> Result<Vec<Value>, Refused> {
    let stop = RefCell::new(None);
    let mut de = serde_json::Deserializer::new(read);
    let result = batch::read(&mut de, &stop).and_then(|events| de.end().map(|()| events));
    match (result, stop.into_inner()) {
        (Ok(events), _) => Ok(events),
        (Err(_), Some(Stop::TooManyEvents)) => Err(Refused {
            message: format!(
                "the batch has more than {MAX_BATCH} events; at most {MAX_BATCH} are accepted per call, nothing was stored"
            ),
            events: MAX_BATCH + 1,
        }),
        (Err(_), Some(Stop::Shape(message))) => Err(Refused::new(message)),
        // The inflating reader's own message.
        (Err(e), None) if e.is_io() => Err(Refused::new(e.to_string())),
        (Err(e), None) => Err(Refused::new(format!("the events are not valid JSON: {e}"))),
    }
}

fn read_error(e: io::Error) -> Refused {
    Refused::new(e.to_string())
}

/// A gzip body inflated, failing once it passes `max` bytes; its errors are messages for the sender.
struct Inflated<R> {
    inner: R,
    left: usize,
    max: usize,
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // One byte more than is left, to know the limit is passed.
        let room = out.len().min(self.left + 1);
        let n = self
            .inner
            .read(&mut out[..room])
            .map_err(|e| io::Error::other(format!("the gzip body does not inflate: {e}")))?;
        if n > self.left {
            return Err(io::Error::other(format!(
                "the body inflates to more than {} bytes, the service's limit",
                self.max
            )));
        }
        self.left -= n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;

    const LIMIT: usize = 1 << 20;

    fn batch() -> Value {
        json!({"events": [{"event_name": "a b+c&d=e%", "user_id": "ü"}, {"event_name": "x"}]})
    }

    fn encoded(text: &str) -> String {
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn message(result: Result<Vec<Value>, Refused>) -> String {
        result.expect_err("refused").message
    }

    #[test]
    fn every_way_of_sending_reads_the_same_events() {
        let json = batch().to_string();
        let array = batch()["events"].to_string();
        let expected = batch()["events"].as_array().unwrap().clone();
        for body in [
            json.clone(),
            format!(" \n{json}\n"),
            encoded(&json),
            format!("events={}", encoded(&json)),
            format!("events={}", encoded(&array)),
            format!("other=1&events={}", encoded(&array)),
            format!("events={}&other=1", encoded(&array)),
            array.clone(),
        ] {
            assert_eq!(
                events(body.as_bytes(), false, LIMIT),
                Ok(expected.clone()),
                "{body}"
            );
            assert_eq!(
                events(&gzip(body.as_bytes()), true, LIMIT),
                Ok(expected.clone()),
                "gzip {body}"
            );
        }
        assert_eq!(
            events(&gzip(json.as_bytes()), false, LIMIT),
            Ok(expected),
            "gzip known by its magic bytes"
        );
    }

    #[test]
    fn malformed_bodies_say_why() {
        let fails = |body: &[u8]| message(events(body, false, LIMIT));
        assert!(fails(b"").contains("empty"));
        assert!(fails(b"  \n").contains("empty"));
        assert!(fails(&gzip(b" ")).contains("empty"));
        assert!(fails(b"{\"events\": [").contains("not valid JSON"));
        assert!(fails(b"{\"events\": []} x").contains("not valid JSON"));
        assert!(fails(b"events=%5B&x=1").contains("not valid JSON"));
        assert!(fails(b"{\"other\": []}").contains("no \"events\""));
        assert!(fails(b"{\"events\": {}}").contains("must be an array"));
        assert!(fails(b"\"events\"").contains("neither"));
        assert!(fails(b"hello=world").contains("neither"));
        assert!(fails(&[0xff, 0xfe]).contains("UTF-8"));
        assert!(fails(&[0x1f, 0x8b, 0, 1]).contains("gzip"));
    }

    #[test]
    fn batches_over_300_are_refused_whole() {
        let ok = json!({"events": vec![json!({}); MAX_BATCH]}).to_string();
        assert_eq!(
            events(ok.as_bytes(), false, LIMIT).unwrap().len(),
            MAX_BATCH
        );
        let big = json!({"events": vec![json!({}); MAX_BATCH + 1]}).to_string();
        for body in [
            big.clone().into_bytes(),
            gzip(big.as_bytes()),
            encoded(&big).into_bytes(),
        ] {
            let refused = events(&body, false, LIMIT).unwrap_err();
            assert!(
                refused.message.contains("more than 300 events"),
                "{refused:?}"
            );
            assert_eq!(refused.events, MAX_BATCH + 1);
        }
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        let bomb = gzip(&vec![b' '; 4 * LIMIT]);
        assert!(bomb.len() < LIMIT / 10);
        assert!(message(events(&bomb, true, LIMIT)).contains("inflates to more"));
        let mut long = b"{\"events\": [{\"p\": \"".to_vec();
        long.resize(4 * LIMIT, b'x');
        assert!(message(events(&gzip(&long), true, LIMIT)).contains("inflates to more"));
        let exactly = format!("[]{}", " ".repeat(LIMIT - 2));
        assert_eq!(events(&gzip(exactly.as_bytes()), true, LIMIT), Ok(vec![]));
    }

    #[test]
    fn a_bomb_of_events_is_read_only_to_event_301() {
        // 16 MiB of events inflated from a few KiB: refused after event 301, well inside the limit.
        let mut body = b"{\"events\":[".to_vec();
        body.extend("0,".repeat(8 << 20).as_bytes());
        body.extend(b"0]}");
        let refused = events(&gzip(&body), true, 1 << 30).unwrap_err();
        assert_eq!(refused.events, MAX_BATCH + 1, "{refused:?}");
    }
}
