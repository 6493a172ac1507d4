//! Reading a `/track` body into the batch's events, whatever way it was sent (docs/ingest-api.md,
//! Sending events): the URL-encoded JSON object `{"events": [...]}` as the whole form body, a form field
//! `events` holding that object or its array, or the raw JSON object; any of them gzip-compressed. Every
//! failure is a message for the sender's `results.error`, never an HTTP error.

use std::io::Read;

use serde_json::Value;

/// The most events one batch may carry; a larger batch is refused whole.
pub const MAX_BATCH: usize = 300;

/// The events of a batch, still unchecked, in the order sent.
pub fn events(body: &[u8], gzip: bool, max_inflated: usize) -> Result<Vec<Value>, String> {
    let inflated;
    let body = if gzip || body.starts_with(&[0x1f, 0x8b]) {
        inflated = inflate(body, max_inflated)?;
        &inflated[..]
    } else {
        body
    };
    let text = std::str::from_utf8(body).map_err(|e| format!("the body is not UTF-8: {e}"))?;
    let text = text.trim();
    if text.is_empty() {
        return Err("the body is empty: send {\"events\": [...]}".into());
    }
    let json = if text.starts_with('{') || text.starts_with('[') {
        text.to_string()
    } else {
        from_form(text)?
    };
    let value: Value =
        serde_json::from_str(&json).map_err(|e| format!("the events are not valid JSON: {e}"))?;
    let events = match value {
        Value::Object(mut object) => match object.remove("events") {
            Some(Value::Array(events)) => events,
            Some(other) => {
                return Err(format!(
                    "\"events\" must be an array, got {}",
                    super::validate::kind(&other)
                ))
            }
            None => return Err("the body has no \"events\" array".into()),
        },
        Value::Array(events) => events,
        other => {
            return Err(format!(
                "the body must be {{\"events\": [...]}}, got {}",
                super::validate::kind(&other)
            ))
        }
    };
    Ok(events)
}

/// Refuses a batch of more than [`MAX_BATCH`] events, whole.
pub fn check_size(events: &[Value]) -> Result<(), String> {
    if events.len() > MAX_BATCH {
        return Err(format!(
            "the batch has {} events; at most {MAX_BATCH} are accepted per call, nothing was stored",
            events.len()
        ));
    }
    Ok(())
}

/// The JSON of a form body: the field `events`, else the whole body URL-decoded.
fn from_form(text: &str) -> Result<String, String> {
    let mut pairs = url::form_urlencoded::parse(text.as_bytes());
    if let Some((_, value)) = pairs.find(|(key, _)| key == "events") {
        let value = value.trim();
        // The field may hold the array itself or the whole object.
        return Ok(if value.starts_with('[') {
            format!("{{\"events\":{value}}}")
        } else {
            value.to_string()
        });
    }
    let decoded: String = url::form_urlencoded::parse(text.as_bytes())
        .map(|(key, value)| {
            if value.is_empty() {
                key.into_owned()
            } else {
                format!("{key}={value}")
            }
        })
        .collect::<Vec<_>>()
        .join("&");
    let decoded = decoded.trim();
    if decoded.starts_with('{') || decoded.starts_with('[') {
        Ok(decoded.to_string())
    } else {
        Err("the body is neither JSON, URL-encoded JSON nor a form with an \"events\" field".into())
    }
}

fn inflate(body: &[u8], max: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len().saturating_mul(4).min(max));
    flate2::read::MultiGzDecoder::new(body)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("the gzip body does not inflate: {e}"))?;
    if out.len() > max {
        return Err(format!(
            "the body inflates to more than {max} bytes, the service's limit"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;

    const LIMIT: usize = 1 << 20;

    fn batch() -> Value {
        json!({"events": [{"event_name": "a b+c&d=e", "user_id": "ü"}, {"event_name": "x"}]})
    }

    fn encoded(text: &str) -> String {
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn every_way_of_sending_reads_the_same_events() {
        let json = batch().to_string();
        let array = batch()["events"].to_string();
        let expected = batch()["events"].as_array().unwrap().clone();
        for body in [
            json.clone(),
            encoded(&json),
            format!("events={}", encoded(&json)),
            format!("events={}", encoded(&array)),
            format!("other=1&events={}", encoded(&array)),
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
        let fails = |body: &[u8]| events(body, false, LIMIT).expect_err("refused");
        assert!(fails(b"").contains("empty"));
        assert!(fails(b"{\"events\": [").contains("not valid JSON"));
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
        let read = events(ok.as_bytes(), false, LIMIT).unwrap();
        assert_eq!(read.len(), MAX_BATCH);
        assert_eq!(check_size(&read), Ok(()));
        let big = json!({"events": vec![json!({}); MAX_BATCH + 1]}).to_string();
        let read = events(big.as_bytes(), false, LIMIT).unwrap();
        assert!(check_size(&read).unwrap_err().contains("301 events"));
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_limit() {
        let bomb = gzip(&vec![b' '; 4 * LIMIT]);
        assert!(bomb.len() < LIMIT / 10);
        assert!(events(&bomb, true, LIMIT)
            .unwrap_err()
            .contains("inflates to more"));
    }
}
