//! A fault test: the real `admin-service` binary is killed with SIGKILL while users are being created and
//! deleted. After a restart every write that was answered 2xx is present with its audit entry, and nothing
//! is half-written: no user without its creation entry, no deletion entry for a user still there, no
//! creation entry for a user gone without its deletion entry.

use std::collections::{HashMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::*;

struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `admin-service` on `port` against the world's database and token service; waits until ready.
async fn start(w: &World, port: u16) -> Service {
    let child = Command::new(env!("CARGO_BIN_EXE_admin-service"))
        .env("SPEECH_ADMIN_ADDR", format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", &w.auth.db.url)
        .env("SPEECH_SECRET_KEY", w.auth.service.state.secret.to_base64())
        .env("SPEECH_AUTH_URL", &w.auth.url)
        .env("SPEECH_PUBLIC_AUTH_URL", &w.auth.url)
        .env("SPEECH_ADMIN_RATE_LIMIT_PER_SECOND", "100000")
        .env("SPEECH_ADMIN_RATE_LIMIT_PER_DAY", "10000000")
        .env("SPEECH_LOG_FORMAT", "text")
        .env_remove("SPEECH_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("admin-service starts");
    let service = Service(child);
    for _ in 0..200 {
        if let Ok(r) = reqwest::get(format!("http://127.0.0.1:{port}/readyz")).await {
            if r.status() == 200 {
                return service;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("admin-service did not become ready");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Done {
    Created,
    Deleted,
    /// Created, then a deletion was sent that got no answer: it may or may not have happened.
    DeletionUnanswered,
}

async fn writes_answered_before_a_kill_are_kept_whole(backend: Backend) {
    let w = World::new(backend).await;
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}/admin/v1");
    let mut service = start(&w, port).await;

    // Four writers create users and delete every other one they created, until the service dies.
    let mut writers = Vec::new();
    for writer in 0..4 {
        let base = base.clone();
        let token = w.token.clone();
        writers.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut answered: Vec<(String, Done)> = Vec::new();
            for i in 0..10_000 {
                let name = format!("w{writer}-{i:05}");
                let created = http
                    .post(format!("{base}/users"))
                    .bearer_auth(&token)
                    .json(&user_body(&name))
                    .send()
                    .await;
                let Ok(created) = created else { break };
                if created.status() != 201 {
                    break;
                }
                answered.push((name.clone(), Done::Created));
                if i % 2 == 1 {
                    let etag = created.headers()["etag"].to_str().unwrap().to_string();
                    let deleted = http
                        .delete(format!("{base}/users/{name}"))
                        .bearer_auth(&token)
                        .header("If-Match", etag)
                        .send()
                        .await;
                    match deleted {
                        Ok(d) if d.status() == 204 => answered.push((name, Done::Deleted)),
                        _ => {
                            answered.push((name, Done::DeletionUnanswered));
                            break;
                        }
                    }
                }
            }
            answered
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    service.0.kill().expect("SIGKILL");
    let _ = service.0.wait();
    let mut answered: HashMap<String, Done> = HashMap::new();
    for writer in writers {
        for (name, done) in writer.await.unwrap() {
            // A deletion answered after the creation supersedes it.
            answered.insert(name, done);
        }
    }
    assert!(
        answered.len() > 20,
        "the writers got going before the kill ({} answers)",
        answered.len()
    );

    // After a restart, read everything back through the API.
    drop(service);
    let _service = start(&w, port).await;
    let http = reqwest::Client::new();
    // A write whose COMMIT the killed process had already sent can still land after the kill: on
    // PostgreSQL its server process finishes it. The users and the audit trail are read by separate
    // requests, so they are read until the users read before and after the audit trail agree.
    let (users, created_entries, deleted_entries) = loop {
        let before = read_users(&http, &base, &w.token).await;
        let (created, deleted) = read_user_audit(&http, &base, &w.token).await;
        let after = read_users(&http, &base, &w.token).await;
        if before == after {
            break (after, created, deleted);
        }
    };

    for (name, done) in &answered {
        match done {
            Done::Created => {
                assert!(users.contains(name), "{name} was answered 201 but is gone");
                assert!(created_entries.contains(name), "{name} has no audit entry");
            }
            Done::Deleted => {
                assert!(!users.contains(name), "{name} was answered 204 but exists");
                assert!(
                    deleted_entries.contains(name),
                    "{name}'s deletion is unaudited"
                );
            }
            // Either way, whole: there with its creation entry, or gone with its deletion entry.
            Done::DeletionUnanswered => {
                assert!(
                    created_entries.contains(name),
                    "{name} has no creation entry"
                );
                assert_eq!(
                    users.contains(name),
                    !deleted_entries.contains(name),
                    "{name} is half-deleted"
                );
            }
        }
    }
    for name in users.iter().filter(|n| n.starts_with('w')) {
        assert!(
            created_entries.contains(name),
            "{name} exists without its creation entry"
        );
        assert!(
            !deleted_entries.contains(name),
            "{name} exists with a deletion entry"
        );
    }
    for name in &created_entries {
        if !users.contains(name) {
            assert!(
                deleted_entries.contains(name),
                "{name} has a creation entry but is neither there nor deleted"
            );
        }
    }
}

common::backend_tests!(writes_answered_before_a_kill_are_kept_whole);

/// Every username, through the API's pages.
async fn read_users(http: &reqwest::Client, base: &str, token: &str) -> HashSet<String> {
    read_all(http, base, token, "users", &[])
        .await
        .iter()
        .map(|user| user["username"].as_str().unwrap().to_string())
        .collect()
}

/// The users with a creation entry and those with a deletion entry in the audit trail.
async fn read_user_audit(
    http: &reqwest::Client,
    base: &str,
    token: &str,
) -> (HashSet<String>, HashSet<String>) {
    let mut created_entries: HashSet<String> = HashSet::new();
    let mut deleted_entries: HashSet<String> = HashSet::new();
    for entry in read_all(http, base, token, "audit", &[("resource_type", "user")]).await {
        let id = entry["resource_id"].as_str().unwrap().to_string();
        match entry["action"].as_str().unwrap() {
            "create" => created_entries.insert(id),
            "delete" => deleted_entries.insert(id),
            _ => false,
        };
    }
    (created_entries, deleted_entries)
}

/// Every item of the paged list at `base/path` (`next_cursor` followed to the end), with `query`.
async fn read_all(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    path: &str,
    query: &[(&str, &str)],
) -> Vec<serde_json::Value> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut request = http
            .get(format!("{base}/{path}"))
            .bearer_auth(token)
            .query(&[("limit", "100")])
            .query(query);
        if let Some(c) = &cursor {
            request = request.query(&[("cursor", c)]);
        }
        let page: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return items,
        }
    }
}
