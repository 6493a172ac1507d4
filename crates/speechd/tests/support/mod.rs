//! What the tests of the `speechd` binary share: free ports, the binary with its environment, bootstrap,
//! a served platform stopped when dropped, a private data directory, a client token.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Ports {
    pub auth: u16,
    pub admin: u16,
    pub analytics: u16,
    pub ingest: u16,
}

impl Ports {
    pub fn free() -> Ports {
        Ports {
            auth: free_port(),
            admin: free_port(),
            analytics: free_port(),
            ingest: free_port(),
        }
    }
}

pub fn speechd(data: &Path, ports: &Ports) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_speechd"));
    command
        .env("SPEECH_DATA_DIR", data)
        .env("SPEECH_AUTH_ADDR", format!("127.0.0.1:{}", ports.auth))
        .env("SPEECH_ADMIN_ADDR", format!("127.0.0.1:{}", ports.admin))
        .env(
            "SPEECH_ANALYTICS_ADDR",
            format!("127.0.0.1:{}", ports.analytics),
        )
        .env("SPEECH_INGEST_ADDR", format!("127.0.0.1:{}", ports.ingest))
        .env("SPEECH_LOG_FORMAT", "text")
        .env_remove("DATABASE_URL")
        .env_remove("SPEECH_SECRET_KEY")
        .env_remove("SPEECH_CONFIG");
    command
}

pub fn bootstrap(data: &Path, ports: &Ports) -> Value {
    bootstrap_with(data, ports, &[])
}

pub fn bootstrap_with(data: &Path, ports: &Ports, env: &[(&str, String)]) -> Value {
    bootstrap_company(data, ports, "acme", env)
}

/// `speechd bootstrap --company <company> --json`, its output.
pub fn bootstrap_company(
    data: &Path,
    ports: &Ports,
    company: &str,
    env: &[(&str, String)],
) -> Value {
    let Output {
        status,
        stdout,
        stderr,
    } = speechd(data, ports)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args([
            "bootstrap",
            "--company",
            company,
            "--redirect-uri",
            "http://127.0.0.1:9/cb",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        status.success(),
        "bootstrap failed: {}",
        String::from_utf8_lossy(&stderr)
    );
    serde_json::from_slice(&stdout).expect("bootstrap --json prints one JSON object")
}

pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
    }
}

pub async fn serve(data: &Path, ports: &Ports) -> Server {
    serve_with(data, ports, &[]).await
}

pub async fn serve_with(data: &Path, ports: &Ports, env: &[(&str, String)]) -> Server {
    let child = speechd(data, ports)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    // Up to 30 s, as the whole suite's load can slow the start past 10 s (seen once, when the suite
    // ended with this test); a process that ended says so at once, with its status.
    for _ in 0..300 {
        if reqwest::get(format!("http://127.0.0.1:{}/healthz", ports.auth))
            .await
            .is_ok()
        {
            return server;
        }
        if let Some(status) = server.0.try_wait().unwrap() {
            panic!("speechd serve ended before it answered: {status}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("speechd serve did not start within 30 s");
}

pub fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("speechd-test-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// The token endpoint's answer to a client-credentials request of the bootstrap client.
pub async fn client_token(creds: &Value) -> Value {
    reqwest::Client::new()
        .post(format!(
            "{}/oauth/{}/token",
            creds["auth_url"].as_str().unwrap(),
            creds["company"].as_str().unwrap()
        ))
        .basic_auth(
            creds["client_id"].as_str().unwrap(),
            creds["client_secret"].as_str(),
        )
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
