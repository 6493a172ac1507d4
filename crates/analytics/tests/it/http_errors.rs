//! Errors the HTTP layer finds before a handler runs are answered in this API's error format
//! (docs/analytics-api.md, Errors): a body over the limit of `/metadata`, `/config`, `/apps` and
//! `/appmatches` (declared with its length or sent in chunks) is a text/html 413, and a method a path
//! does not answer a text/html 405 with an `Allow` header.

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::*;

const TOO_LARGE: &str = "the body is larger than 1048576 bytes";

/// A JSON object of about 1.2 MB.
fn big_body() -> Vec<u8> {
    format!(r#"{{"queue": "{}"}}"#, "x".repeat(1_200_000)).into_bytes()
}

/// Sends `body` in chunks of 64 KiB (no `Content-Length`) over a connection of its own, and reads the
/// answer's status line, headers and body as text.
async fn send_chunked(world: &World, method: &str, path: &str, body: Vec<u8>) -> String {
    let url = world.url(path, Some(&world.token));
    let address = world
        .analytics
        .url
        .trim_start_matches("http://")
        .to_string();
    let target = url.trim_start_matches(&world.analytics.url).to_string();
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    // The server may answer, and stop reading, before the body is sent whole.
    let write = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        for chunk in body.chunks(64 * 1024) {
            writer
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .await?;
            writer.write_all(chunk).await?;
            writer.write_all(b"\r\n").await?;
        }
        writer.write_all(b"0\r\n\r\n").await?;
        writer.flush().await
    });
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            // A reset once the answer is read: the server closed a connection it had not read whole.
            Err(_) if !answer.is_empty() => break,
            Err(e) => panic!("{method} {path}: {e}"),
        }
    }
    let _ = write.await;
    String::from_utf8_lossy(&answer).into_owned()
}

async fn a_body_over_the_limit_is_a_413_in_the_apis_error_format(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    let metadata = format!("/metadata/{COMPANY}/{ORG}/{call}");
    let folder = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    let before = world.send("GET", &folder, None).await.body;
    let requests = [
        ("PATCH", metadata.clone()),
        ("DELETE", metadata.clone()),
        ("PUT", folder.clone()),
        ("POST", format!("/config/{COMPANY}/{ORG}/new")),
        ("PUT", format!("/config/{COMPANY}")),
        ("PUT", format!("/apps/{COMPANY}/big")),
        ("GET", format!("/appmatches/{COMPANY}/{ORG}/{call}")),
    ];
    for (method, path) in &requests {
        let response = reqwest::Client::new()
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                world.url(path, Some(&world.token)),
            )
            .header("content-type", "application/json")
            .body(big_body())
            .send()
            .await
            .expect("an answer");
        let a = read(response).await;
        assert_eq!(a.status, 413, "{method} {path}: {}", a.text);
        assert!(
            a.content_type.starts_with("text/html"),
            "{method} {path}: {}",
            a.content_type
        );
        assert_eq!(a.text, TOO_LARGE, "{method} {path}");
    }
    // Sent in chunks, the body is found too large as it is read.
    for (method, path) in &requests[..2] {
        let answer = send_chunked(&world, method, path, big_body()).await;
        assert!(
            answer.starts_with("HTTP/1.1 413"),
            "{method} {path}: {answer}"
        );
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("content-type: text/html"),
            "{answer}"
        );
        assert!(answer.ends_with(TOO_LARGE), "{answer}");
    }
    // Nothing changed.
    assert_eq!(world.send("GET", &folder, None).await.body, before);
    let stored = world.written_transcript(&call).await;
    assert_eq!(
        stored["metadata"],
        json!({"queue": "billing", "campaign": "autumn"})
    );
    let a = world
        .send("GET", &format!("/apps/{COMPANY}/big"), None)
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
    let a = world
        .send("GET", &format!("/config/{COMPANY}/{ORG}/new"), None)
        .await;
    assert_eq!(a.status, 404, "{}", a.text);
}

async fn a_method_a_path_does_not_answer_is_a_405_in_the_apis_error_format(stack: Stack) {
    let world = World::with_folder(stack).await;
    let call = world.add_call(&transcript("invoice")).await;
    for (method, path, allow) in [
        (
            "PUT",
            format!("/metadata/{COMPANY}/{ORG}/{call}"),
            "PATCH, DELETE",
        ),
        (
            "GET",
            format!("/metadata/{COMPANY}/{ORG}/{call}"),
            "PATCH, DELETE",
        ),
        ("POST", format!("/stats/{COMPANY}/{ORG}"), "GET"),
        ("POST", format!("/appstats/{COMPANY}/{ORG}/sales"), "GET"),
        (
            "PATCH",
            format!("/config/{COMPANY}"),
            "GET, POST, PUT, DELETE",
        ),
        ("POST", format!("/apps/{COMPANY}/sales"), "GET, PUT, DELETE"),
        (
            "GET",
            format!("/transcribe/{COMPANY}/{ORG}/{FOLDER}"),
            "POST",
        ),
    ] {
        let response = reqwest::Client::new()
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                world.url(&path, Some(&world.token)),
            )
            .json(&json!({}))
            .send()
            .await
            .expect("an answer");
        let allowed = response
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let a = read(response).await;
        assert_eq!(a.status, 405, "{method} {path}: {}", a.text);
        assert!(
            a.content_type.starts_with("text/html"),
            "{method} {path}: {:?}",
            a.content_type
        );
        assert!(a.text.contains(method), "{method} {path}: {}", a.text);
        assert_eq!(allowed.as_deref(), Some(allow), "{method} {path}");
    }
}

crate::stack_tests!(
    a_body_over_the_limit_is_a_413_in_the_apis_error_format,
    a_method_a_path_does_not_answer_is_a_405_in_the_apis_error_format,
);
