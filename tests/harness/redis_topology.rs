//! Redis as users run it, started for real from Debian's `redis-server` (which is also the
//! Sentinel, run with `--sentinel`): one server over TLS with ACL users, a master and a
//! replica watched by a Sentinel, and a three-master Redis Cluster made with
//! `redis-cli --cluster create`. Each process is killed when its value is dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::redis::{free_port, redis_server_binary};

/// One `redis-server` process (a data node or a sentinel).
pub struct Node {
    child: Option<Child>,
    /// Its loopback port.
    pub port: u16,
}

impl Node {
    fn spawn(port: u16, args: &[String]) -> Self {
        let child = Command::new(redis_server_binary())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        Self { child: Some(child), port }
    }

    /// `SIGKILL`: the node vanishes mid-request, as a crashed host does.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
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

fn plain_args(port: u16, dir: &Path) -> Vec<String> {
    let dir = dir.to_str().expect("utf-8 temp dir");
    ["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir]
        .map(str::to_owned)
        .to_vec()
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
    _dir: tempfile::TempDir,
}

impl TlsServer {
    /// Starts it and waits until `user` gets `PONG` over TLS.
    pub fn start(tls: &TlsFiles, user: &str, password: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let mut args = plain_args(0, dir.path());
        let path = |p: &Path| p.to_str().expect("utf-8 path").to_owned();
        args.extend([
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            path(&tls.cert),
            "--tls-key-file".into(),
            path(&tls.key),
            "--tls-ca-cert-file".into(),
            path(&tls.ca),
            "--tls-auth-clients".into(),
            "no".into(),
            "--user".into(),
            "default".into(),
            "off".into(),
            "--user".into(),
            user.into(),
            "on".into(),
            format!(">{password}"),
            "~*".into(),
            "&*".into(),
            "+@all".into(),
        ]);
        let node = Node::spawn(port, &args);
        let ping = || {
            let out = Command::new("redis-cli")
                .args(["--tls", "--cacert", &path(&tls.ca), "-h", "127.0.0.1", "-p", &port.to_string()])
                .args(["--user", user, "--pass", password, "--no-auth-warning", "ping"])
                .stderr(Stdio::null())
                .output()
                .expect("run redis-cli");
            String::from_utf8_lossy(&out.stdout).trim() == "PONG"
        };
        wait_for(Duration::from_secs(20), "the TLS Redis never answered PING (is redis-server built with TLS?)", ping);
        Self { node, _dir: dir }
    }
}

/// Three masters, no replicas, every slot covered.
pub struct Cluster {
    /// The masters.
    pub nodes: Vec<Node>,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts three cluster-enabled servers, joins them with `redis-cli --cluster create`
    /// and waits until every node reports `cluster_state:ok`.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let nodes: Vec<Node> = (0..3)
            .map(|_| {
                let port = free_port();
                let mut args = plain_args(port, dir.path());
                args.extend(
                    ["--cluster-enabled", "yes", "--cluster-node-timeout", "2000", "--cluster-config-file"]
                        .map(str::to_owned),
                );
                args.push(format!("nodes-{port}.conf"));
                Node::spawn(port, &args)
            })
            .collect();
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
        Self { nodes, _dir: dir }
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
    _dir: tempfile::TempDir,
}

/// The master name the Sentinel watches.
pub const MASTER_NAME: &str = "mymaster";

impl SentinelSet {
    /// Starts the three processes and waits until the Sentinel knows the replica (it can
    /// only fail over to a replica it knows).
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (mport, rport, sport) = (free_port(), free_port(), free_port());
        let master = Node::spawn(mport, &plain_args(mport, dir.path()));
        wait_for(Duration::from_secs(20), "the master never answered PING", || cli(mport, &["ping"]) == "PONG");
        let mut args = plain_args(rport, dir.path());
        args.extend(["--replicaof".into(), "127.0.0.1".into(), mport.to_string()]);
        let replica = Node::spawn(rport, &args);
        wait_for(Duration::from_secs(20), "the replica never synced", || {
            cli(rport, &["info", "replication"]).contains("master_link_status:up")
        });
        let conf = dir.path().join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {sport}\nbind 127.0.0.1\ndir {}\nsentinel monitor {MASTER_NAME} 127.0.0.1 {mport} 1\n\
                 sentinel down-after-milliseconds {MASTER_NAME} 1000\nsentinel failover-timeout {MASTER_NAME} 5000\n",
                dir.path().display()
            ),
        )
        .expect("write sentinel.conf");
        let sentinel = Node::spawn(sport, &[conf.to_str().expect("utf-8 path").to_owned(), "--sentinel".into()]);
        wait_for(Duration::from_secs(30), "the sentinel never saw the replica", || {
            cli(sport, &["sentinel", "replicas", MASTER_NAME]).contains(&rport.to_string())
        });
        Self { master, replica, sentinel, _dir: dir }
    }

    /// The master's port as the Sentinel reports it now.
    pub fn master_port(&self) -> u16 {
        let out = cli(self.sentinel.port, &["sentinel", "get-master-addr-by-name", MASTER_NAME]);
        out.lines().nth(1).and_then(|p| p.trim().parse().ok()).unwrap_or(0)
    }
}
