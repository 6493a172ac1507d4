//! PostgreSQL restarted while batches arrive: every batch answered as stored is stored, exactly once; a
//! batch answered `retry: true` is stored by sending it again; the service recovers by itself. The test
//! runs a PostgreSQL server of its own (initdb into a temporary directory), since the shared one serves
//! other tests.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::db::Database;
use ingest::model::Project;
use ingest::testing::{test_config, TestIngest};
use serde_json::{json, Value};

use crate::support::now_ms;

const SENDERS: usize = 4;
const BATCHES: usize = 40;
const EVENTS: usize = 50;
const KEY: &str = "fa0172c0ffee4bad0000000000000001";

/// A PostgreSQL server in a temporary directory, stopped and removed on drop.
struct PrivatePostgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

impl PrivatePostgres {
    /// None when no PostgreSQL server binaries are installed.
    fn start() -> Option<PrivatePostgres> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .find(|bin| bin.join("initdb").exists() && bin.join("pg_ctl").exists())?;
        let dir = std::env::temp_dir().join(format!(
            "ingest-fault-pg-{}-{}",
            std::process::id(),
            now_ms()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = PrivatePostgres { bin, dir, port };
        // initdb and the server refuse to run as root: then they run as the postgres user.
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&server.dir)
                .status()
                .unwrap();
            assert!(status.success(), "chown the data directory to postgres");
        }
        let data = server.dir.join("data");
        server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        );
        server.pg_ctl("start");
        Some(server)
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn run(&self, program: &str, args: &[&str]) {
        let path = self.bin.join(program);
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let output = command.args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `pg_ctl <action>` (start, restart, stop) on this server, waiting until it is done.
    fn pg_ctl(&self, action: &str) {
        let data = self.dir.join("data");
        let log = self.dir.join("server.log");
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {}",
            self.port,
            self.dir.display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &options,
                "-m",
                "fast",
                "-w",
                action,
            ],
        );
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let path = self.bin.join("pg_ctl");
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let _ = command
            .args([
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn batch(sender: usize, number: usize) -> Value {
    let now = now_ms();
    json!((0..EVENTS)
        .map(|i| json!({"event_name": "load", "user_id": format!("s{sender}"), "event_timestamp_epoch": now,
                        "insert_id": format!("s{sender}-b{number}-e{i}")}))
        .collect::<Vec<_>>())
}

async fn send(http: &reqwest::Client, url: &str, events: &Value) -> Value {
    let body = json!({ "events": events }).to_string();
    let response = http
        .post(format!("{url}/v3/{KEY}/track"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_batch_answered_stored_survives_a_postgres_restart() {
    let Some(server) = PrivatePostgres::start() else {
        eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql");
        return;
    };
    let db = Database::connect(&server.url(), 10).await.unwrap();
    let ingest =
        TestIngest::start(test_config("http://127.0.0.1:9", &server.url()), db.clone()).await;
    ingest::store::insert_project(
        &db,
        &Project {
            app_key: KEY.into(),
            company: "acme".into(),
            name: "load".into(),
            server_time: false,
            created_at: common::db::now(),
        },
    )
    .await
    .unwrap();
    let url = Arc::new(ingest.url.clone());
    let answered = Arc::new(AtomicUsize::new(0));

    // The senders: each sends its batches in turn and keeps what it was told about each.
    let mut senders = Vec::new();
    for sender in 0..SENDERS {
        let (url, answered) = (url.clone(), answered.clone());
        senders.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut outcomes = Vec::new();
            for number in 0..BATCHES {
                let events = batch(sender, number);
                let answer = send(&http, &url, &events).await;
                answered.fetch_add(1, Ordering::SeqCst);
                outcomes.push((events, answer));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            outcomes
        }));
    }
    // The restart, once a quarter of the batches are answered.
    while answered.load(Ordering::SeqCst) < SENDERS * BATCHES / 4 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let server = tokio::task::spawn_blocking(move || {
        server.pg_ctl("restart");
        server
    })
    .await
    .unwrap();

    let mut stored_batches = Vec::new();
    let mut to_resend = Vec::new();
    let mut refused = 0;
    for sender in senders {
        for (events, answer) in sender.await.unwrap() {
            let results = &answer["results"];
            if answer["status"] == json!(true) {
                assert_eq!(
                    results["stored"].as_u64().unwrap() + results["duplicates"].as_u64().unwrap(),
                    EVENTS as u64,
                    "{answer}"
                );
                stored_batches.push(events);
            } else {
                assert_eq!(
                    results["retry"],
                    json!(true),
                    "only the database's failure: {answer}"
                );
                refused += 1;
                to_resend.push(events);
            }
        }
    }
    // Sending the refused batches again stores them: the service has recovered.
    let http = reqwest::Client::new();
    for events in &to_resend {
        let mut stored = false;
        for _ in 0..50 {
            let answer = send(&http, &url, events).await;
            if answer["status"] == json!(true) {
                stored = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(stored, "a refused batch is stored when sent again");
    }

    // Every event is there exactly once.
    let Database::Postgres(pool, _) = &db else {
        unreachable!()
    };
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT insert_id, count(*) FROM ingest_events WHERE app_key = $1 GROUP BY insert_id",
    )
    .bind(KEY)
    .fetch_all(pool)
    .await
    .unwrap();
    assert!(rows.iter().all(|(_, n)| *n == 1), "an event stored twice");
    let ids: std::collections::HashSet<String> = rows.into_iter().map(|(id, _)| id).collect();
    for events in stored_batches.iter().chain(&to_resend) {
        for event in events.as_array().unwrap() {
            let id = event["insert_id"].as_str().unwrap();
            assert!(ids.contains(id), "{id} was answered stored but is missing");
        }
    }
    assert_eq!(ids.len(), SENDERS * BATCHES * EVENTS);
    eprintln!(
        "{} batches answered stored, {refused} refused during the restart and stored when sent again",
        stored_batches.len()
    );
    drop(server);
}
