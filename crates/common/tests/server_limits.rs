//! The limits every service's server keeps (common::http::serve): a body slower than its deadline is
//! answered 408 and its connection closed, a body that keeps up a modest rate is not; at the connection
//! limit `/healthz` is still answered on a reserved connection while any other request is answered 503,
//! and past the reserve a connection is closed as it comes.

use std::time::{Duration, Instant};

use actix_web::{web, HttpResponse};
use common::http::{serve, HttpLimits, HttpMetrics, Readiness, ServerSpec};
use common::testing::loopback_listener;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server with `limits` and two routes: `GET /hello` and `POST /echo` (the body's length).
fn start(limits: HttpLimits) -> String {
    let (listener, url) = loopback_listener();
    let spec = ServerSpec {
        name: "limits-test",
        openapi: utoipa::openapi::OpenApiBuilder::new().build(),
        readiness: Readiness::new(|| async { vec![] }),
        metrics: HttpMetrics::new("limits-test"),
        workers: 2,
        limits,
        answer: common::http::api_error_answer,
    };
    let server = serve(spec, listener, |cfg| {
        cfg.route(
            "/hello",
            web::get().to(|| async { HttpResponse::Ok().body("hello") }),
        )
        .route(
            "/echo",
            web::post().to(|body: web::Bytes| async move {
                HttpResponse::Ok().body(body.len().to_string())
            }),
        );
    })
    .unwrap();
    tokio::spawn(server);
    url.trim_start_matches("http://").to_string()
}

/// Everything the server sends until it closes the connection (a reset after some of it ends it too),
/// or what came within `wait`.
async fn read_all(stream: &mut TcpStream, wait: Duration) -> (String, bool) {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    let closed = tokio::time::timeout(wait, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .is_ok();
    (String::from_utf8_lossy(&answer).into_owned(), closed)
}

async fn post_head(address: &str, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let head = format!("POST /echo HTTP/1.1\r\nhost: test\r\ncontent-length: {length}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_slower_than_its_deadline_is_answered_408_and_its_connection_closed() {
    let address = start(HttpLimits {
        body_timeout: Duration::from_secs(1),
        body_min_rate: 1000,
        ..HttpLimits::default()
    });
    // 3,000 bytes over 2 s: slower than the 1 s of the timeout, faster than 1,000 bytes a second.
    let mut steady = post_head(&address, 3000).await;
    for _ in 0..3 {
        steady.write_all(&[b'x'; 1000]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let (answer, _) = read_all(&mut steady, Duration::from_millis(500)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("3000"), "{answer}");

    // One byte, then nothing: cut off after the 1 s and the 1 ms it earned.
    let started = Instant::now();
    let mut slow = post_head(&address, 1000).await;
    slow.write_all(b"x").await.unwrap();
    let (answer, closed) = read_all(&mut slow, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"body_timeout\""), "{answer}");
    assert!(closed, "the connection is closed");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_is_answered_at_the_connection_limit_and_excess_connections_are_closed() {
    let address = start(HttpLimits {
        max_connections: 4,
        reserved_connections: 2,
        body_timeout: Duration::from_secs(60),
        ..HttpLimits::default()
    });
    let fresh = || {
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap()
    };
    // Four senders of bodies that never come fill the limit.
    let mut slow = Vec::new();
    for _ in 0..4 {
        slow.push(post_head(&address, 1000).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let health = fresh()
        .get(format!("http://{address}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let refused = fresh()
        .get(format!("http://{address}/hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");

    // Two idle connections take the reserve; the next one is answered 503 and closed at once.
    let mut idle = Vec::new();
    for _ in 0..2 {
        idle.push(TcpStream::connect(&address).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut excess = TcpStream::connect(&address).await.unwrap();
    let (answer, closed) = read_all(&mut excess, Duration::from_secs(2)).await;
    assert!(closed, "closed as it was accepted: {answer}");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 503"),
        "{answer}"
    );

    // Once the slow senders go, requests are served again; the refusals were counted.
    drop(slow);
    drop(idle);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let hello = fresh()
        .get(format!("http://{address}/hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(hello.status(), 200);
    let metrics = fresh()
        .get(format!("http://{address}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for reason in ["reserved", "closed"] {
        let counted = metrics.lines().any(|line| {
            line.starts_with("http_connections_refused_total{")
                && line.contains(&format!("reason=\"{reason}\""))
                && line.ends_with(" 1")
        });
        assert!(counted, "{reason} in {metrics}");
    }
}
