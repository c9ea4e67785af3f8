//! A real Redis for tests: Debian's `redis-server` in a container ([`crate::images::redis`]),
//! one per test, on a port published on the host's loopback. Never skipped: no container
//! engine, no test (and the failure says how to start one).
//!
//! Every Redis runs in a [`Pod`]: a network namespace held by an idle container, its ports
//! published on 127.0.0.1 under the same numbers inside. The servers of one topology join it,
//! so they reach each other at the very `127.0.0.1:PORT` the test and the runtime use, and the
//! addresses a Sentinel or a Cluster node announces work on both sides without announce
//! settings; a server can be killed and started again while its port stays published.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use testcontainers::{CopyDataSource, ImageExt as _};

use crate::containers::{Container, Network};
use crate::images;

/// A network namespace for one topology's servers, with its ports published. Clones share
/// it; the holder is removed with the last.
#[derive(Clone)]
pub struct Pod {
    holder: Arc<Container>,
    /// The published ports, the same numbers on the host's loopback and inside.
    pub ports: Vec<u16>,
}

impl Pod {
    /// A pod with `n` ports, free on the host when picked.
    pub async fn start(n: usize) -> Self {
        let mut last = String::new();
        // A port picked free can be taken before the engine publishes it: try a few sets.
        for _ in 0..5 {
            let ports = free_ports(n);
            // The holder is a redis-server listening on a Unix socket only (one listening
            // nowhere exits): an idle process, as a Kubernetes pod's pause container is.
            let holder =
                images::redis().await.with_cmd(["--port", "0", "--unixsocket", "/data/holder.sock", "--save", ""]);
            match Container::try_start("redis pod", holder, Network::Published(&ports)).await {
                Ok(holder) => return Self { holder: Arc::new(holder), ports },
                Err(e) => last = e,
            }
        }
        panic!("no pod for Redis after 5 tries:\n{last}");
    }

    /// A `redis-server ARGS…` in this pod, with `files` copied in first (path in the
    /// container, content).
    pub async fn redis(&self, what: &str, args: &[String], files: &[(&str, Vec<u8>)]) -> Container {
        let mut request = images::redis().await.with_cmd(args.to_vec());
        for (at, bytes) in files {
            request = request.with_copy_to(*at, CopyDataSource::Data(bytes.clone()));
        }
        Container::start(what, request, Network::JoinedTo(&self.holder)).await
    }
}

/// `n` distinct ports free on the host's loopback when picked.
pub fn free_ports(n: usize) -> Vec<u16> {
    // Held together while picking, so the kernel hands out distinct ones.
    let held: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").expect("bind")).collect();
    held.iter().map(|l| l.local_addr().expect("addr").port()).collect()
}

/// The arguments of a plain, memory-only server on `port`. Protected mode off: the test's
/// connections reach it through the engine's port forwarding, not from its own loopback.
pub fn server_args(port: u16) -> Vec<String> {
    ["--port", &port.to_string(), "--save", "", "--appendonly", "no", "--protected-mode", "no"]
        .map(str::to_owned)
        .to_vec()
}

/// A Redis server for one test.
pub struct RedisServer {
    // Before the pod: its servers go first (an engine refuses to remove a namespace in use).
    server: Option<Container>,
    pod: Pod,
    /// `redis://127.0.0.1:PORT`.
    pub url: String,
    port: u16,
}

impl RedisServer {
    /// Starts one and waits until it answers `PING` on its published port.
    pub async fn start() -> Self {
        let pod = Pod::start(1).await;
        let port = pod.ports[0];
        let mut server = Self { server: None, pod, url: format!("redis://127.0.0.1:{port}"), port };
        server.restart().await;
        server
    }

    /// Kills it (outage tests): connections are refused until [`RedisServer::restart`].
    pub async fn stop(&mut self) {
        drop(self.server.take());
    }

    /// Starts it again on the same port, empty.
    pub async fn restart(&mut self) {
        self.server = Some(self.pod.redis("redis", &server_args(self.port), &[]).await);
        let end = Instant::now() + Duration::from_secs(20);
        while !ping(self.port) {
            assert!(Instant::now() < end, "Redis did not answer PING on port {}", self.port);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}
