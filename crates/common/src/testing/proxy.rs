//! A TCP proxy in front of a real server (the test broker), which a fault test takes down and up again:
//! down, it refuses new connections and cuts the open ones, as a restarting broker or a network outage
//! would; the server itself, shared by every test running in parallel, is never touched. It can also
//! stall the open connections: they stay open and carry nothing more, as when a peer or a link between
//! vanishes without closing anything, which the client notices only by waiting. And it can lose
//! requests: close the connection of a client chunk that starts with given bytes without passing it on, as
//! a server closing a kept connection just as a request goes out does.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;

/// Which client chunks to lose, and how many more ([`TcpProxy::lose`]).
#[derive(Default)]
struct Loss {
    prefix: Mutex<Vec<u8>>,
    left: AtomicU32,
}

impl Loss {
    /// Whether this chunk from a client is to be lost, counting it if so.
    fn takes(&self, chunk: &[u8]) -> bool {
        let prefix = self.prefix.lock().unwrap();
        !prefix.is_empty()
            && chunk.starts_with(&prefix)
            && self
                .left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
    }
}

/// Passes a client's chunks to the server, but for one to lose: then it returns, which closes the
/// connection. At the client's end of sending, the server's side is shut for writing and the answers
/// still flow.
async fn pass_requests(
    mut client: tokio::net::tcp::OwnedReadHalf,
    mut server: tokio::net::tcp::OwnedWriteHalf,
    loss: &Loss,
) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let read = match client.read(&mut chunk).await {
            Ok(0) => {
                let _ = server.shutdown().await;
                return std::future::pending().await;
            }
            Ok(read) => read,
            Err(_) => return,
        };
        if loss.takes(&chunk[..read]) || server.write_all(&chunk[..read]).await.is_err() {
            return;
        }
    }
}

pub struct TcpProxy {
    /// The proxy's own address, `127.0.0.1:<port>`.
    pub addr: String,
    up: Arc<AtomicBool>,
    cut: broadcast::Sender<()>,
    stall: broadcast::Sender<()>,
    loss: Arc<Loss>,
    accepting: tokio::task::JoinHandle<()>,
}

impl TcpProxy {
    /// A proxy to `target` (`host:port`), up or down from the start. Must run within a Tokio runtime.
    pub async fn start(target: &str, up: bool) -> TcpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let up = Arc::new(AtomicBool::new(up));
        let (cut, _) = broadcast::channel(1);
        let (stall, _) = broadcast::channel(1);
        let loss = Arc::new(Loss::default());
        let accepting = {
            let (up, cut, stall, loss, target) = (
                up.clone(),
                cut.clone(),
                stall.clone(),
                loss.clone(),
                target.to_string(),
            );
            tokio::spawn(async move {
                while let Ok((inbound, _)) = listener.accept().await {
                    if !up.load(Ordering::SeqCst) {
                        // Down: the connection ends before the server's greeting.
                        continue;
                    }
                    let (mut cut, mut stall) = (cut.subscribe(), stall.subscribe());
                    let (target, loss) = (target.clone(), loss.clone());
                    tokio::spawn(async move {
                        let Ok(outbound) = TcpStream::connect(&target).await else {
                            return;
                        };
                        let (client_reads, mut client_writes) = inbound.into_split();
                        let (mut server_reads, server_writes) = outbound.into_split();
                        tokio::select! {
                            _ = pass_requests(client_reads, server_writes, &loss) => return,
                            _ = tokio::io::copy(&mut server_reads, &mut client_writes) => return,
                            _ = cut.recv() => return,
                            _ = stall.recv() => {}
                        }
                        // Stalled: both ends stay open, and nothing passes, until the cut.
                        let _ = cut.recv().await;
                    });
                }
            })
        };
        TcpProxy {
            addr,
            up,
            cut,
            stall,
            loss,
            accepting,
        }
    }

    /// A proxy to the test broker, and the broker's URL with the proxy's address in place of its own.
    pub async fn to_broker(up: bool) -> (TcpProxy, String) {
        let (before, target, after) = split_url(&super::amqp_url());
        let proxy = TcpProxy::start(&target, up).await;
        let url = format!("{before}{}{after}", proxy.addr);
        (proxy, url)
    }

    /// Down refuses new connections and cuts the open ones.
    pub fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::SeqCst);
        if !up {
            let _ = self.cut.send(());
        }
    }

    /// The connections open now carry nothing more, in either direction, and stay open; new ones work.
    pub fn stall(&self) {
        let _ = self.stall.send(());
    }

    /// The next `times` chunks that a client sends starting with `prefix` (a request line, say) are lost:
    /// the connection that sent each is closed without passing it on, and with no answer. The rest passes.
    pub fn lose(&self, prefix: &[u8], times: u32) {
        *self.loss.prefix.lock().unwrap() = prefix.to_vec();
        self.loss.left.store(times, Ordering::SeqCst);
    }

    /// How many of the chunks [`Self::lose`] asked for are still to be lost.
    pub fn left_to_lose(&self) -> u32 {
        self.loss.left.load(Ordering::SeqCst)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accepting.abort();
        // Stalled connections are held until cut.
        let _ = self.cut.send(());
    }
}

/// `amqp://user:pass@` , `host:port`, `/vhost`.
fn split_url(url: &str) -> (String, String, String) {
    let (scheme, rest) = url.split_once("://").expect("an AMQP URL");
    let (auth, rest) = match rest.rsplit_once('@') {
        Some((auth, rest)) => (format!("{auth}@"), rest),
        None => (String::new(), rest),
    };
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    (
        format!("{scheme}://{auth}"),
        host.to_string(),
        path.to_string(),
    )
}
