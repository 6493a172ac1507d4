//! A callback receiver for the tests: a real HTTP server on loopback that records every post whole
//! (headers and body), answers a failure to the first `fail_first` posts, and reads multipart bodies so
//! tests can check the fields a receiver gets.

use std::sync::Arc;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use parking_lot::Mutex;

/// One multipart field: its name, file name, content type and value.
pub type Part = (String, Option<String>, Option<String>, Vec<u8>);

/// One post as the receiver got it.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub content_type: String,
    pub webhook_id: String,
    pub webhook_timestamp: i64,
    pub webhook_signature: String,
    pub body: Vec<u8>,
}

impl Received {
    /// The multipart fields of the body.
    pub fn fields(&self) -> Vec<Part> {
        let boundary = self
            .content_type
            .split("boundary=")
            .nth(1)
            .expect("a multipart boundary")
            .trim_matches('"')
            .to_string();
        let delimiter = format!("--{boundary}");
        let text = self.body.clone();
        let mut fields = Vec::new();
        let mut rest: &[u8] = &text;
        while let Some(start) = find(rest, delimiter.as_bytes()) {
            rest = &rest[start + delimiter.len()..];
            if rest.starts_with(b"--") {
                break;
            }
            rest = rest.strip_prefix(b"\r\n").expect("CRLF after a delimiter");
            let head_end = find(rest, b"\r\n\r\n").expect("part headers end");
            let head = String::from_utf8(rest[..head_end].to_vec()).unwrap();
            rest = &rest[head_end + 4..];
            let end = find(rest, format!("\r\n{delimiter}").as_bytes()).expect("part end");
            let value = rest[..end].to_vec();
            rest = &rest[end + 2..];
            let disposition = head
                .lines()
                .find(|l| l.starts_with("Content-Disposition: "))
                .expect("a Content-Disposition header")
                .to_string();
            let param = |name: &str| {
                disposition
                    .split(';')
                    .map(str::trim)
                    .find_map(|p| p.strip_prefix(&format!("{name}=\"")))
                    .map(|v| v.trim_end_matches('"').to_string())
            };
            let content_type = head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Type: "))
                .map(str::to_string);
            fields.push((
                param("name").unwrap(),
                param("filename"),
                content_type,
                value,
            ));
        }
        fields
    }

    pub fn field(&self, name: &str) -> Option<String> {
        self.fields()
            .into_iter()
            .find(|(n, ..)| n == name)
            .map(|(.., v)| String::from_utf8(v).unwrap())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[derive(Default)]
struct Inner {
    received: Vec<Received>,
    fail_first: usize,
}

/// A running receiver; stops when dropped.
pub struct Receiver {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
    handle: actix_web::dev::ServerHandle,
}

impl Receiver {
    /// Starts a receiver that answers 503 to its first `fail_first` posts, then 200.
    pub async fn start(fail_first: usize) -> Receiver {
        let inner = Arc::new(Mutex::new(Inner {
            received: Vec::new(),
            fail_first,
        }));
        let shared = inner.clone();
        let server = HttpServer::new(move || {
            let shared = shared.clone();
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
                let shared = shared.clone();
                async move {
                    let header = |name: &str| {
                        req.headers()
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_string()
                    };
                    let mut inner = shared.lock();
                    inner.received.push(Received {
                        path: req.uri().to_string(),
                        content_type: header("content-type"),
                        webhook_id: header("webhook-id"),
                        webhook_timestamp: header("webhook-timestamp").parse().unwrap_or(0),
                        webhook_signature: header("webhook-signature"),
                        body: body.to_vec(),
                    });
                    if inner.received.len() <= inner.fail_first {
                        HttpResponse::ServiceUnavailable().body("try again")
                    } else {
                        HttpResponse::Ok().body("thanks")
                    }
                }
            }))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("a loopback port");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Receiver {
            url: format!("http://127.0.0.1:{port}/hooks/speech"),
            inner,
            handle,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.lock().received.clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        tokio::spawn(async move { handle.stop(false).await });
    }
}
