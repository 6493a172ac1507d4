//! A loopback TCP proxy in front of the token service that never answers one path: it lets the verifier
//! tests hold one company's JWKS fetch open for as long as they like, to show that other companies are
//! not kept waiting behind it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

pub struct StallingProxy {
    /// Base URL of the proxy, e.g. `http://127.0.0.1:40123`.
    pub url: String,
    stalled: Arc<AtomicUsize>,
    stall_seen: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StallingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StallingProxy {
    /// Forwards every request to `upstream` (a base URL) except those for `stall_path`, which are read and
    /// then left unanswered, their connection open.
    pub async fn start(upstream: &str, stall_path: &str) -> StallingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let stall_path = stall_path.to_string();
        let stalled = Arc::new(AtomicUsize::new(0));
        let stall_seen = Arc::new(Notify::new());
        let (count, seen) = (stalled.clone(), stall_seen.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, stall_path) = (upstream.clone(), stall_path.clone());
                let (count, seen) = (count.clone(), seen.clone());
                tokio::spawn(async move {
                    let _ = relay(client, &upstream, &stall_path, &count, &seen).await;
                });
            }
        });
        StallingProxy {
            url,
            stalled,
            stall_seen,
            task,
        }
    }

    /// Requests for the stalled path received so far.
    pub fn stalled_requests(&self) -> usize {
        self.stalled.load(Ordering::SeqCst)
    }

    /// Waits until a request for the stalled path has arrived (at once if one already has).
    pub async fn wait_for_stall(&self) {
        let notified = self.stall_seen.notified();
        if self.stalled_requests() > 0 {
            return;
        }
        notified.await;
    }
}

/// Serves one request of `client`: stalls it, or forwards it with `Connection: close` so that the next
/// request arrives on a new connection and is inspected too.
async fn relay(
    mut client: TcpStream,
    upstream: &str,
    stall_path: &str,
    stalled: &AtomicUsize,
    stall_seen: &Notify,
) -> std::io::Result<()> {
    let head = read_head(&mut client).await?;
    let path = head
        .lines()
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .unwrap_or("");
    if path == stall_path {
        stalled.fetch_add(1, Ordering::SeqCst);
        stall_seen.notify_waiters();
        // Hold the connection open without answering until the test ends.
        std::future::pending::<()>().await;
    }
    let mut request: String = head
        .split("\r\n")
        .filter(|line| !line.is_empty() && !line.to_ascii_lowercase().starts_with("connection:"))
        .map(|line| format!("{line}\r\n"))
        .collect();
    request.push_str("Connection: close\r\n\r\n");
    let mut server = TcpStream::connect(upstream).await?;
    server.write_all(request.as_bytes()).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}

/// Reads up to the blank line that ends the request head (the verifier only sends bodiless GETs).
async fn read_head(client: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte).await? == 0 {
            break;
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}
