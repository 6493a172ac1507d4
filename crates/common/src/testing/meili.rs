//! A Meilisearch server of the test's own: found on this machine, started on a free loopback port with a
//! fresh database directory, stopped (and its directory removed) when the guard is dropped, panics
//! included. A test that needs one fails when no binary is found: `scripts/test` leaves such tests out by
//! name where there is none (the filter `MEILISEARCH_TESTS` of `.config/nextest.toml`), and lists them as
//! skipped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const MASTER_KEY: &str = "contract-tests-master-key-0123456789";
const STARTUP: Duration = Duration::from_secs(30);

pub struct MeiliServer {
    child: Child,
    dir: PathBuf,
    pub url: String,
}

impl MeiliServer {
    /// Starts a server; panics, saying how to provide one, when no binary is found.
    pub async fn start() -> MeiliServer {
        let binary = find_binary().expect(
            "no Meilisearch server found: set MEILI_BIN or put meilisearch on PATH \
             (scripts/test leaves out the tests that need one where there is none)",
        );
        // A free port can be taken between asking for it and the server binding it: try again.
        let mut last_error = String::new();
        for _ in 0..3 {
            match start(&binary).await {
                Ok(server) => return server,
                Err(e) => last_error = e,
            }
        }
        panic!("{} did not start: {last_error}", binary.display());
    }
}

impl Drop for MeiliServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `MEILI_BIN`, then `meilisearch` on `PATH`, then `shared/bin/meilisearch` beside any ancestor of this
/// crate (the workspace's shared tools).
fn find_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MEILI_BIN") {
        return Some(PathBuf::from(path));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("meilisearch"));
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/bin/meilisearch"));
    on_path.chain(shared).find(|path| path.is_file())
}

async fn start(binary: &Path) -> Result<MeiliServer, String> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let dir = std::env::temp_dir().join(format!("speech-meili-{}", uuid::Uuid::new_v4().simple()));
    let child = Command::new(binary)
        .arg("--db-path")
        .arg(dir.join("db"))
        .args(["--http-addr", &format!("127.0.0.1:{port}")])
        .args(["--master-key", MASTER_KEY])
        .arg("--no-analytics")
        // Its default indexing buffer is a share of the machine's memory, and setting up hundreds of
        // megabytes takes seconds per write; the tests write a handful of documents at a time.
        .args(["--max-indexing-memory", "64MiB"])
        .args(["--log-level", "WARN"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut server = MeiliServer {
        child,
        dir,
        url: format!("http://127.0.0.1:{port}"),
    };
    let health = format!("{}/health", server.url);
    let client = reqwest::Client::new();
    let started = Instant::now();
    while started.elapsed() < STARTUP {
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(format!("exited with {status}"));
        }
        if let Ok(response) = client.get(&health).send().await {
            if response.status().is_success() {
                return Ok(server);
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err(format!("no answer from {health} within {STARTUP:?}"))
}
