//! A TCP proxy in front of a real server (the test broker), which a fault test takes down and up again:
//! down, it refuses new connections and cuts the open ones, as a restarting broker or a network outage
//! would; the server itself, shared by every test running in parallel, is never touched. It can also
//! stall the open connections: they stay open and carry nothing more, as when a peer or a link between
//! vanishes without closing anything, which the client notices only by waiting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;

pub struct TcpProxy {
    /// The proxy's own address, `127.0.0.1:<port>`.
    pub addr: String,
    up: Arc<AtomicBool>,
    cut: broadcast::Sender<()>,
    stall: broadcast::Sender<()>,
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
        let accepting = {
            let (up, cut, stall, target) =
                (up.clone(), cut.clone(), stall.clone(), target.to_string());
            tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    if !up.load(Ordering::SeqCst) {
                        // Down: the connection ends before the server's greeting.
                        continue;
                    }
                    let (mut cut, mut stall) = (cut.subscribe(), stall.subscribe());
                    let target = target.clone();
                    tokio::spawn(async move {
                        let Ok(mut outbound) = TcpStream::connect(&target).await else {
                            return;
                        };
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => return,
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
