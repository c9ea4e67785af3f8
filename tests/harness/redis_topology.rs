//! Redis as users run it, each server Debian's `redis-server` in a container of its own
//! (which is also the Sentinel, run with `--sentinel`): one server over TLS with ACL users, a
//! master and a replica watched by a Sentinel, and a three-master Redis Cluster made with
//! `redis-cli --cluster create`. The servers of a topology share a [`Pod`], so the addresses
//! they announce to each other (`127.0.0.1:PORT`) are the ones the test and the runtime reach
//! through the published ports. Each container is removed when its value is dropped.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::containers::{Container, block_on};
use crate::redis::{Pod, server_args};

/// One `redis-server` (a data node or a sentinel) in a container.
pub struct Node {
    server: Option<Container>,
    /// Its port, published on the host's loopback.
    pub port: u16,
}

impl Node {
    /// `SIGKILL` (the container is removed): the node vanishes mid-request, as a crashed host does.
    pub fn kill(&mut self) {
        drop(self.server.take());
    }
}

fn node(pod: &Pod, i: usize, server: Container) -> Node {
    Node { server: Some(server), port: pod.ports[i] }
}

/// A `redis-server ARGS…` in `pod`, `files` copied in first; for synchronous callers.
fn start_in(pod: &Pod, what: &'static str, args: Vec<String>, files: Vec<(&'static str, Vec<u8>)>) -> Container {
    let pod = pod.clone();
    block_on(async move { pod.redis(what, &args, &files).await })
}

/// `redis-cli -p PORT ARGS…` (plain TCP), its trimmed output; empty when it failed.
pub fn cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .expect("run redis-cli (apt-get install redis-tools)");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Polls `ok` every 50 ms for up to `within`; panics with `what` when it never holds.
pub fn wait_for(within: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} (within {within:?})");
}

/// Certificate files for a TLS server.
pub struct TlsFiles {
    /// The CA that signed `cert`.
    pub ca: PathBuf,
    /// The server's certificate chain.
    pub cert: PathBuf,
    /// Its key.
    pub key: PathBuf,
}

/// A TLS-only server (no plain port) whose `default` user is off and whose one ACL user is
/// `user` / `password`.
pub struct TlsServer {
    /// The server.
    pub node: Node,
    _pod: Pod,
}

impl TlsServer {
    /// Starts it and waits until `user` gets `PONG` over TLS.
    pub fn start(tls: &TlsFiles, user: &str, password: &str) -> Self {
        let read = |p: &PathBuf| std::fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        let files =
            [("/tls/ca.pem", read(&tls.ca)), ("/tls/cert.pem", read(&tls.cert)), ("/tls/key.pem", read(&tls.key))];
        let pod = block_on(Pod::start(1));
        let mut args = server_args(0);
        args.extend(
            [
                "--tls-port",
                &pod.ports[0].to_string(),
                "--tls-cert-file",
                "/tls/cert.pem",
                "--tls-key-file",
                "/tls/key.pem",
                "--tls-ca-cert-file",
                "/tls/ca.pem",
                "--tls-auth-clients",
                "no",
                "--user",
                "default",
                "off",
                "--user",
                user,
                "on",
                &format!(">{password}"),
                "~*",
                "&*",
                "+@all",
            ]
            .map(str::to_owned),
        );
        let server = start_in(&pod, "redis tls", args, files.to_vec());
        let port = pod.ports[0];
        let ca = tls.ca.to_str().expect("utf-8 path").to_owned();
        let ping = || {
            let out = Command::new("redis-cli")
                .args(["--tls", "--cacert", &ca, "-h", "127.0.0.1", "-p", &port.to_string()])
                .args(["--user", user, "--pass", password, "--no-auth-warning", "ping"])
                .stderr(Stdio::null())
                .output()
                .expect("run redis-cli");
            String::from_utf8_lossy(&out.stdout).trim() == "PONG"
        };
        wait_for(Duration::from_secs(20), "the TLS Redis never answered PING (is redis-server built with TLS?)", ping);
        Self { node: node(&pod, 0, server), _pod: pod }
    }
}

/// Three masters, no replicas, every slot covered.
pub struct Cluster {
    /// The masters.
    pub nodes: Vec<Node>,
    _pod: Pod,
}

impl Cluster {
    /// Starts three cluster-enabled servers, joins them with `redis-cli --cluster create`
    /// and waits until every node reports `cluster_state:ok`.
    pub fn start() -> Self {
        let pod = block_on(Pod::start(3));
        let servers: Vec<Container> = pod
            .ports
            .iter()
            .enumerate()
            .map(|(i, port)| {
                let mut args = server_args(*port);
                // The bus port (gossip between nodes) stays inside the pod: a fixed one, since
                // the default, port + 10 000, overflows for ports above 55 535.
                args.extend(["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"].map(str::to_owned));
                args.extend(["--cluster-port".to_owned(), (16379 + i).to_string()]);
                start_in(&pod, "redis cluster node", args, vec![])
            })
            .collect();
        let nodes: Vec<Node> = servers.into_iter().enumerate().map(|(i, s)| node(&pod, i, s)).collect();
        for n in &nodes {
            wait_for(Duration::from_secs(20), "a cluster node never answered PING", || {
                cli(n.port, &["ping"]) == "PONG"
            });
        }
        let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let created = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("run redis-cli --cluster create");
        assert!(created.status.success(), "redis-cli --cluster create: {}", String::from_utf8_lossy(&created.stdout));
        for n in &nodes {
            wait_for(Duration::from_secs(30), "the cluster never reached cluster_state:ok", || {
                cli(n.port, &["cluster", "info"]).contains("cluster_state:ok")
            });
        }
        Self { nodes, _pod: pod }
    }

    /// `redis://127.0.0.1:PORT` of each master.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(|n| format!("redis://127.0.0.1:{}", n.port)).collect()
    }
}

/// A master, its replica, and one Sentinel (quorum 1) watching them as `mymaster`.
pub struct SentinelSet {
    /// The master at start.
    pub master: Node,
    /// Its replica, promoted by a failover.
    pub replica: Node,
    /// The sentinel.
    pub sentinel: Node,
    _pod: Pod,
}

/// The master name the Sentinel watches.
pub const MASTER_NAME: &str = "mymaster";

impl SentinelSet {
    /// Starts the three servers and waits until the Sentinel knows the replica (it can only
    /// fail over to a replica it knows).
    pub fn start() -> Self {
        let pod = block_on(Pod::start(3));
        let (mport, rport, sport) = (pod.ports[0], pod.ports[1], pod.ports[2]);
        let master = start_in(&pod, "redis master", server_args(mport), vec![]);
        wait_for(Duration::from_secs(20), "the master never answered PING", || cli(mport, &["ping"]) == "PONG");
        let mut args = server_args(rport);
        args.extend(["--replicaof".into(), "127.0.0.1".into(), mport.to_string()]);
        let replica = start_in(&pod, "redis replica", args, vec![]);
        wait_for(Duration::from_secs(20), "the replica never synced", || {
            cli(rport, &["info", "replication"]).contains("master_link_status:up")
        });
        // Sentinel rewrites its config file: it gets a copy of its own in the container.
        let conf = format!(
            "port {sport}\nprotected-mode no\ndir /data\nsentinel monitor {MASTER_NAME} 127.0.0.1 {mport} 1\n\
             sentinel down-after-milliseconds {MASTER_NAME} 1000\nsentinel failover-timeout {MASTER_NAME} 5000\n"
        );
        let args = vec!["/data/sentinel.conf".to_owned(), "--sentinel".to_owned()];
        let sentinel = start_in(&pod, "redis sentinel", args, vec![("/data/sentinel.conf", conf.into_bytes())]);
        wait_for(Duration::from_secs(30), "the sentinel never saw the replica", || {
            cli(sport, &["sentinel", "replicas", MASTER_NAME]).contains(&rport.to_string())
        });
        Self {
            master: node(&pod, 0, master),
            replica: node(&pod, 1, replica),
            sentinel: node(&pod, 2, sentinel),
            _pod: pod,
        }
    }

    /// The master's port as the Sentinel reports it now.
    pub fn master_port(&self) -> u16 {
        let out = cli(self.sentinel.port, &["sentinel", "get-master-addr-by-name", MASTER_NAME]);
        out.lines().nth(1).and_then(|p| p.trim().parse().ok()).unwrap_or(0)
    }
}
