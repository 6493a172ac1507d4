//! The bodies of callback posts (docs/transcription.md, Callbacks): multipart/form-data with the text
//! field `requestid` and either a file part `file` holding the result in the requested format, or a
//! text field `error`. Built here byte for byte, because the signature covers exactly the bytes sent.

/// A body ready to post: its bytes and its `Content-Type` header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub bytes: Vec<u8>,
    pub content_type: String,
}

struct Form {
    boundary: String,
    bytes: Vec<u8>,
}

impl Form {
    fn new(request_id: &str) -> Form {
        // The request id makes the boundary unique per request; the fixed prefix is not a UUID's shape,
        // so no UUID text inside a part can end it.
        Form {
            boundary: format!("speech-callback-{}", request_id.replace('-', "")),
            bytes: Vec::new(),
        }
    }

    fn part(&mut self, disposition: &str, content_type: Option<&str>, value: &[u8]) {
        self.bytes.extend_from_slice(b"--");
        self.bytes.extend_from_slice(self.boundary.as_bytes());
        self.bytes
            .extend_from_slice(b"\r\nContent-Disposition: form-data; ");
        self.bytes.extend_from_slice(disposition.as_bytes());
        self.bytes.extend_from_slice(b"\r\n");
        if let Some(content_type) = content_type {
            self.bytes.extend_from_slice(b"Content-Type: ");
            self.bytes.extend_from_slice(content_type.as_bytes());
            self.bytes.extend_from_slice(b"\r\n");
        }
        self.bytes.extend_from_slice(b"\r\n");
        self.bytes.extend_from_slice(value);
        self.bytes.extend_from_slice(b"\r\n");
    }

    fn finish(mut self) -> Body {
        self.bytes.extend_from_slice(b"--");
        self.bytes.extend_from_slice(self.boundary.as_bytes());
        self.bytes.extend_from_slice(b"--\r\n");
        Body {
            content_type: format!("multipart/form-data; boundary={}", self.boundary),
            bytes: self.bytes,
        }
    }
}

/// Quotes a file name for a `Content-Disposition` parameter: no quote, backslash or line break survives.
fn quoted(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The post of a finished transcription: `requestid` and the result as the file part.
pub fn result(request_id: &str, file_name: &str, content_type: &str, result: &[u8]) -> Body {
    let mut form = Form::new(request_id);
    form.part(r#"name="requestid""#, None, request_id.as_bytes());
    form.part(
        &format!(r#"name="file"; filename="{}""#, quoted(file_name)),
        Some(content_type),
        result,
    );
    form.finish()
}

/// The post of a failed transcription: `requestid` and `error`, the message.
pub fn error(request_id: &str, message: &str) -> Body {
    let mut form = Form::new(request_id);
    form.part(r#"name="requestid""#, None, request_id.as_bytes());
    form.part(r#"name="error""#, None, message.as_bytes());
    form.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "6f1c2a44-0d59-4c8e-9a37-3f5e9b2a1c10";

    #[test]
    fn a_result_is_a_requestid_field_and_a_file_part() {
        let body = result(
            ID,
            "call.txt",
            "text/plain; charset=utf-8",
            b"agent: hello\n",
        );
        let b = "speech-callback-6f1c2a440d594c8e9a373f5e9b2a1c10";
        assert_eq!(
            body.content_type,
            format!("multipart/form-data; boundary={b}")
        );
        let expected = format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"requestid\"\r\n\r\n{ID}\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"call.txt\"\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\r\nagent: hello\n\r\n--{b}--\r\n"
        );
        assert_eq!(String::from_utf8(body.bytes).unwrap(), expected);
    }

    #[test]
    fn an_error_is_a_requestid_and_an_error_field() {
        let body = error(ID, "the audio could not be decoded");
        let text = String::from_utf8(body.bytes).unwrap();
        assert!(text.contains("name=\"error\"\r\n\r\nthe audio could not be decoded\r\n"));
        assert!(!text.contains("filename"));
    }

    #[test]
    fn file_names_cannot_break_out_of_their_parameter() {
        let body = result(ID, "a\"b\r\nX-Evil: 1.json", "application/json", b"{}");
        let text = String::from_utf8(body.bytes).unwrap();
        assert!(text.contains("filename=\"a_b__X-Evil: 1.json\""), "{text}");
    }
}
