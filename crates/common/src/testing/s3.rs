//! An S3-protocol server of the test's own: s3s-fs (objects as files under a fresh directory) behind
//! real HTTP on a free loopback port, with SigV4 authentication, so the S3 adapter is tested through the
//! same requests, signatures and error documents it exchanges with MinIO or AWS. It runs on a thread and
//! a runtime of its own, so it outlives the runtime of the test that started it until the guard drops.
//! `stop` and `restart` take it away and bring it back on the same port and directory, for fault tests.

use std::net::SocketAddr;
use std::path::PathBuf;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::sync::oneshot;

use crate::objects::{ObjectError, S3Options, S3Store};

pub const ACCESS_KEY_ID: &str = "speech-test-access-key";
pub const SECRET_ACCESS_KEY: &str = "speech-test-secret-key-0123456789";
pub const REGION: &str = "us-east-1";

pub struct S3Server {
    dir: PathBuf,
    addr: SocketAddr,
    pub endpoint: String,
    running: Option<Running>,
}

struct Running {
    stop: oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl S3Server {
    pub fn start() -> S3Server {
        let dir = std::env::temp_dir().join(format!("speech-s3-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let running = Some(serve(dir.clone(), listener));
        S3Server {
            dir,
            addr,
            endpoint: format!("http://{addr}"),
            running,
        }
    }

    /// Options for a bucket of this server (created by `S3Store::connect`).
    pub fn options(&self, bucket: &str) -> S3Options {
        S3Options {
            endpoint: self.endpoint.clone(),
            bucket: bucket.to_string(),
            region: REGION.to_string(),
            access_key_id: ACCESS_KEY_ID.to_string(),
            secret_access_key: SECRET_ACCESS_KEY.into(),
            virtual_hosted: false,
        }
    }

    /// A store on a fresh bucket of this server.
    pub async fn store(&self) -> Result<S3Store, ObjectError> {
        let bucket = format!("test-{}", uuid::Uuid::new_v4().simple());
        S3Store::connect(self.options(&bucket)).await
    }

    /// Closes the port; connections in progress are cut.
    pub fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = running.stop.send(());
            let _ = running.thread.join();
        }
    }

    /// Serves again on the same port and directory: every object stored before is still there.
    pub fn restart(&mut self) {
        self.stop();
        let listener = std::net::TcpListener::bind(self.addr).unwrap();
        self.running = Some(serve(self.dir.clone(), listener));
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn serve(dir: PathBuf, listener: std::net::TcpListener) -> Running {
    let (stop, mut stopped) = oneshot::channel::<()>();
    listener.set_nonblocking(true).unwrap();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let mut builder = S3ServiceBuilder::new(s3s_fs::FileSystem::new(&dir).unwrap());
            builder.set_auth(SimpleAuth::from_single(ACCESS_KEY_ID, SECRET_ACCESS_KEY));
            let service = builder.build();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let socket = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((socket, _)) => socket,
                        Err(_) => continue,
                    },
                    _ = &mut stopped => break,
                };
                // As S3 services do (MinIO, like every Go server, and AWS answer without Nagle's
                // algorithm): with it, a response's body waits behind its headers until the client's
                // delayed acknowledgement, 40 ms on Linux, so every GET took 40 ms more than it should.
                let _ = socket.set_nodelay(true);
                let service = service.clone();
                connections.spawn(async move {
                    let _ = Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
            // Dropping the listener and aborting every connection: the port is free when `stop` returns.
            drop(listener);
            connections.abort_all();
        });
        runtime.shutdown_background();
    });
    Running { stop, thread }
}
