//! Start-up without a dependency: the real `analytics-service` binary, started while PostgreSQL and
//! RabbitMQ cannot be reached (each behind a proxy that is down), stays up and answers that it is
//! starting — alive, not ready, every API request 503 with `Retry-After` — and becomes ready by itself
//! once each comes back. A wrong setting (a database that does not exist) still ends it.

use std::process::{Command, Stdio};
use std::time::Duration;

use common::testing::proxy::TcpProxy;
use common::testing::{Backend, TestDb};

use crate::binary::{free_port, DataDir, Process};
use crate::support::within;

/// `analytics-service` on `port`, on the database at `database_url` and the broker at `amqp_url`.
fn spawn(port: u16, database_url: &str, amqp_url: &str, data_dir: &std::path::Path) -> Process {
    let child = Command::new(env!("CARGO_BIN_EXE_analytics-service"))
        .env("SPEECH_ANALYTICS_ADDR", format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", database_url)
        .env("AMQP_URL", amqp_url)
        .env(
            "SPEECH_SECRET_KEY",
            common::secrets::SecretKey::generate().to_base64(),
        )
        .env("SPEECH_AUTH_URL", "http://127.0.0.1:9")
        .env("SPEECH_ANALYTICS_DATA_DIR", data_dir)
        .env("SPEECH_LOG_FORMAT", "text")
        .env_remove("SPEECH_CONFIG")
        .env_remove("S3_ENDPOINT")
        .env_remove("MEILI_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("analytics-service starts");
    Process(child)
}

/// The status and body of a GET, or `None` while nothing answers.
async fn get(port: u16, path: &str) -> Option<(u16, reqwest::header::HeaderMap, String)> {
    let r = reqwest::get(format!("http://127.0.0.1:{port}{path}"))
        .await
        .ok()?;
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    Some((status, headers, r.text().await.ok()?))
}

async fn ready_within(port: u16, limit: Duration) -> bool {
    within(limit, || async {
        match get(port, "/readyz").await {
            Some((200, ..)) => Some(()),
            _ => None,
        }
    })
    .await
    .is_some()
}

/// Answers as a starting service: alive, not ready, API requests 503 with `Retry-After`.
async fn assert_starting(port: u16) {
    let (status, _, body) = get(port, "/healthz").await.expect("/healthz answers");
    assert_eq!(status, 200, "alive while waiting: {body}");
    let (status, _, body) = get(port, "/readyz").await.expect("/readyz answers");
    assert_eq!(status, 503, "not ready while waiting: {body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["status"], "starting", "{body}");
    let (status, headers, body) = get(port, "/config/acme").await.expect("the API answers");
    assert_eq!(status, 503, "{body}");
    assert_eq!(headers["retry-after"], "1");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["code"], "unavailable", "{body}");
}

#[tokio::test]
async fn analytics_waits_for_its_database_and_broker_then_becomes_ready() {
    let db = TestDb::new(Backend::Postgres).await;
    let url = url::Url::parse(&db.url).unwrap();
    let target = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
    let pg = TcpProxy::start(&target, false).await;
    let mut proxied = url.clone();
    let (host, port) = pg.addr.split_once(':').unwrap();
    proxied.set_host(Some(host)).unwrap();
    proxied.set_port(Some(port.parse().unwrap())).unwrap();
    let (broker, amqp_url) = TcpProxy::to_broker(false).await;
    let port = free_port();
    let data = DataDir::new("start-up");
    let mut service = spawn(port, proxied.as_str(), &amqp_url, &data.0);

    let answering = within(Duration::from_secs(20), || get(port, "/healthz")).await;
    assert!(
        answering.is_some(),
        "the address answers while the database is down"
    );
    assert_starting(port).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(service.0.try_wait().unwrap().is_none(), "still running");
    assert_starting(port).await;

    // The database back, the broker still down: still starting.
    pg.set_up(true);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(service.0.try_wait().unwrap().is_none(), "still running");
    assert_starting(port).await;

    broker.set_up(true);
    assert!(
        ready_within(port, Duration::from_secs(60)).await,
        "ready once the database and the broker are back"
    );
    let (status, _, body) = get(port, "/config/acme").await.unwrap();
    assert_eq!(status, 401, "the API itself answers now: {body}");
}

#[tokio::test]
async fn analytics_exits_on_a_database_that_does_not_exist() {
    let db = TestDb::new(Backend::Postgres).await;
    let mut url = url::Url::parse(&db.url).unwrap();
    url.set_path("no_such_database_here");
    let port = free_port();
    let data = DataDir::new("start-up");
    let mut service = spawn(port, url.as_str(), &common::testing::amqp_url(), &data.0);
    let mut exited = None;
    for _ in 0..300 {
        exited = service.0.try_wait().unwrap();
        if exited.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = exited.expect("a wrong setting ends the process");
    assert!(!status.success(), "{status:?}");
}
