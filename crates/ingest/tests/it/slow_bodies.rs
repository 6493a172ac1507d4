//! Bodies that arrive too slowly: past the server's deadline (`body_timeout_secs`, plus a second per
//! `body_min_rate` bytes) `/track` answers as it answers any body it cannot read, 200 with the error,
//! and the other endpoints answer 408 in the platform's error format; either way the connection closes.

use std::time::Duration;

use common::backend_tests;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Backend, World};

backend_tests!(a_body_slower_than_its_deadline_is_cut_off);

/// Sends the head of `path` declaring 1000 bytes of body and one byte of it, then nothing: the status
/// line and the answer's body, read until the server closes the connection.
async fn trickle(world: &World, path: &str, token: Option<&str>) -> (String, Value) {
    let address = world.ingest.url.trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let authorization = token
        .map(|t| format!("authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n{authorization}\
         content-length: 1000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    tokio::time::timeout(Duration::from_secs(6), async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .expect("answered and closed within the deadline");
    let answer = String::from_utf8(answer).unwrap();
    let status = answer.lines().next().unwrap_or_default().to_string();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

async fn a_body_slower_than_its_deadline_is_cut_off(backend: Backend) {
    let world = World::with(backend, |c| {
        c.common.body_timeout_secs = 1;
        c.common.body_min_rate = 1000;
    })
    .await;
    let (status, answer) = trickle(&world, &format!("/v3/{}/track", world.app_key), None).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(answer["status"], json!(false), "{answer}");
    let error = answer["results"]["error"].as_str().unwrap();
    assert!(error.contains("did not arrive in time"), "{answer}");
    let (status, answer) = trickle(&world, "/v3/projects", Some(&world.token)).await;
    assert!(status.starts_with("HTTP/1.1 408"), "{status}");
    assert_eq!(answer["code"], json!("body_timeout"), "{answer}");
    assert_eq!(world.all_events(&world.app_key).await.len(), 0);
}
