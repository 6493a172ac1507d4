//! `/track` against bodies built to exhaust it: gzip bombs cost a few bodies' worth of memory however
//! far they inflate, and a body sent to no project, or declared larger than the limit, is never read.

use std::io::Write;
use std::time::Duration;

use common::backend_tests;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{now_ms, Backend, World};

backend_tests!(
    gzip_bombs_at_once_cost_a_few_bodies_of_memory,
    a_body_for_no_project_or_over_the_limit_is_never_read,
);

const MAX_BODY: usize = 1 << 20;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// 16 MiB of JSON, as `{"events": [` + `item` repeated + `]}` (`item` ends with a comma).
fn bomb(open: &str, item: &str, close: &str) -> Vec<u8> {
    let mut text = open.as_bytes().to_vec();
    while text.len() < 16 << 20 {
        text.extend_from_slice(item.as_bytes());
    }
    text.pop();
    text.extend_from_slice(close.as_bytes());
    gzip(&text)
}

/// The process's resident memory now and at its peak since the last reset, in bytes.
fn resident() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<u64>()
            .unwrap()
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Makes the peak resident memory the current one (Linux 4.0 and later).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

async fn gzip_bombs_at_once_cost_a_few_bodies_of_memory(backend: Backend) {
    let world = World::with(backend, |c| {
        c.max_body_bytes = MAX_BODY;
        c.max_inflated_bytes = 32 << 20;
    })
    .await;
    let path = format!("/v3/{}/track", world.app_key);
    // Millions of events; one event of millions of values; one property of millions of values.
    let many = bomb("{\"events\":[", "0,", "]}");
    let wide = bomb("{\"events\":[[", "0,", "]]}");
    let deep = bomb("{\"events\":[{\"p\":[", "0,", "]}]}");
    for body in [&many, &wide, &deep] {
        assert!(body.len() < MAX_BODY, "{} bytes", body.len());
    }
    // A first batch, so that what every call needs (the project, the writer) is in place.
    let ok = json!([{"event_name": "ok", "user_id": "u", "event_timestamp_epoch": now_ms()}]);
    assert_eq!(
        world.track(&world.app_key, ok.clone()).await["status"],
        json!(true)
    );

    reset_peak();
    let (before, _) = resident();
    let gzip_header = [("content-encoding", "gzip")];
    let sent = (0..8).map(|i| {
        let body = [&many, &wide, &deep][i % 3].clone();
        world.track_raw(&path, body, &gzip_header)
    });
    let (answers, normal) = tokio::join!(
        futures_util::future::join_all(sent),
        world.track(&world.app_key, ok)
    );
    let (_, peak) = resident();
    let grown = peak.saturating_sub(before);
    assert!(
        grown < 16 * MAX_BODY as u64,
        "8 bombs grew the process by {} MiB (from {} MiB)",
        grown >> 20,
        before >> 20
    );

    assert_eq!(normal["status"], json!(true), "{normal}");
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer["status"], json!(false), "{answer}");
        assert_eq!(answer["results"]["stored"], json!(0), "{answer}");
        match i % 3 {
            0 => {
                let error = answer["results"]["error"].as_str().unwrap();
                assert!(error.contains("more than 300 events"), "{answer}");
                assert_eq!(answer["events_count"], json!(301));
            }
            1 => assert_eq!(
                answer["results"]["failed_events"][0]["message"],
                json!("an event is a JSON object, got an array"),
                "{answer}"
            ),
            _ => {
                let failed: &Vec<Value> = answer["results"]["failed_events"].as_array().unwrap();
                assert!(
                    failed.iter().any(|f| f["field"] == json!("p")
                        && f["message"].as_str().unwrap().contains("nested JSON")),
                    "{answer}"
                );
            }
        }
    }
    assert_eq!(world.all_events(&world.app_key).await.len(), 2);
}

/// Sends only the head of a POST declaring `length` bytes of body, and reads the answer.
async fn head_only(world: &World, path: &str, length: usize) -> Value {
    let address = world.ingest.url.trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n\
         content-length: {length}\r\nconnection: close\r\n\r\n{{\"events\": ["
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    // The rest of the body never comes: the answer must not wait for it.
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer))
        .await
        .expect("answered without the body")
        .unwrap();
    let answer = String::from_utf8(answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    serde_json::from_str(body).unwrap()
}

async fn a_body_for_no_project_or_over_the_limit_is_never_read(backend: Backend) {
    let world = World::with(backend, |c| c.max_body_bytes = MAX_BODY).await;
    let unknown = head_only(&world, "/v3/0123456789abcdef0123456789abcdef/track", 1000).await;
    let error = unknown["results"]["error"].as_str().unwrap();
    assert!(error.contains("unknown app key"), "{unknown}");
    assert_eq!(unknown["events_count"], json!(0));
    let path = format!("/v3/{}/track", world.app_key);
    let large = head_only(&world, &path, MAX_BODY + 1).await;
    let error = large["results"]["error"].as_str().unwrap();
    assert!(error.contains("larger than"), "{large}");
    assert_eq!(world.all_events(&world.app_key).await.len(), 0);
}
