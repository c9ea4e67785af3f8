//! A real nginx (the Debian package, in a container: [`crate::images::nginx`]) in front of
//! runtime replicas, running the shipped round-robin config `docker/nginx/mcp-runtime.conf`
//! unchanged, or a config of the test's.
//!
//! The container gets `/etc/nginx/` as docker/compose mounts it: a minimal main `nginx.conf`
//! (the access log, which records which replica answered, on stdout; the error log on
//! stderr; both read back through the engine), the shipped snippet, the `mcp-upstream.conf`
//! derived from `docker/nginx/mcp-upstream.compose.conf` (the same `server` parameters,
//! loopback addresses instead of compose host names) and an `mcp-listen.conf` with a free
//! loopback port. It runs on the host's network: the replicas are processes on the host's
//! loopback, which a container in a network namespace of its own cannot reach.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use testcontainers::{CopyDataSource, ImageExt as _};

use crate::containers::{Container, Network, block_on};
use crate::{images, paths};

/// A running nginx (master and workers in one container, `daemon off`).
pub struct Nginx {
    container: Container,
    /// Where nginx listens.
    pub addr: SocketAddr,
    /// `http://addr/mcp`.
    pub url: String,
}

/// One line of the access log.
#[derive(Debug, Clone)]
pub struct Access {
    /// When nginx finished the request, in milliseconds since the Unix epoch.
    pub at_ms: f64,
    /// Status sent to the client.
    pub status: u16,
    /// Every replica tried, in order (more than one when nginx moved on after a connect error).
    pub upstreams: Vec<String>,
    /// The status each replica gave (`502` for a failed attempt).
    pub upstream_statuses: Vec<String>,
}

impl Nginx {
    /// Starts nginx round-robin over `replicas` with the shipped config.
    pub fn start(replicas: &[SocketAddr]) -> Self {
        let shipped = paths::repo().join("docker/nginx/mcp-runtime.conf");
        let snippet = std::fs::read(&shipped).unwrap_or_else(|e| panic!("read {}: {e}", shipped.display()));
        let upstream = upstream_conf(replicas);
        Self::start_with(
            "include mcp-runtime.conf;",
            vec![("mcp-runtime.conf", snippet), ("mcp-upstream.conf", upstream.into_bytes())],
        )
    }

    /// Starts nginx with `http` inside its `http {}` block (after the harness's logs and temp
    /// paths) and `files` beside its `nginx.conf`. `http` includes `mcp-listen.conf`, where
    /// the harness writes the `listen` line of a free loopback port.
    pub fn start_with(http: &str, files: Vec<(&'static str, Vec<u8>)>) -> Self {
        let mut last_error = String::new();
        // A port picked free can be taken before nginx binds it: try a few.
        for _ in 0..5 {
            match Self::try_start(http, &files) {
                Ok(n) => return n,
                Err(e) => last_error = e,
            }
        }
        panic!("nginx did not start:\n{last_error}");
    }

    fn try_start(http: &str, files: &[(&'static str, Vec<u8>)]) -> Result<Self, String> {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut files = files.to_vec();
        files.push(("mcp-listen.conf", format!("listen 127.0.0.1:{port};\n").into_bytes()));
        files.push(("nginx.conf", main_conf(http).into_bytes()));
        let container = block_on(async move {
            let mut request = images::nginx().await.with_cmd(["-c", "/etc/nginx/nginx.conf", "-e", "stderr"]);
            for (name, bytes) in files {
                request = request.with_copy_to(format!("/etc/nginx/{name}"), CopyDataSource::Data(bytes));
            }
            Container::start("nginx", request, Network::Host).await
        });
        let nginx = Self { container, addr, url: format!("http://{addr}/mcp") };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if TcpStream::connect(addr).is_ok() {
                return Ok(nginx);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("nginx did not accept connections on {addr} within 10 s:\n{}", nginx.error_log()))
    }

    /// An MCP client that talks to nginx.
    pub fn mcp(&self) -> crate::Mcp {
        crate::Mcp::new(&self.url)
    }

    /// The access log so far.
    pub fn access_log(&self) -> Vec<Access> {
        self.container.stdout().lines().filter_map(parse_access).collect()
    }

    /// The error log so far (connect failures, replicas marked down).
    pub fn error_log(&self) -> String {
        self.container.stderr()
    }
}

/// The compose upstream list with each `server host:port` replaced by a replica's address,
/// keeping the parameters (`max_fails`, `fail_timeout`) of the shipped file.
fn upstream_conf(replicas: &[SocketAddr]) -> String {
    let shipped = paths::repo().join("docker/nginx/mcp-upstream.compose.conf");
    let text = std::fs::read_to_string(&shipped).unwrap_or_else(|e| panic!("read {}: {e}", shipped.display()));
    let params = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("server "))
        .and_then(|rest| rest.trim_end_matches(';').split_once(' ').map(|(_, p)| p.to_owned()))
        .unwrap_or_default();
    let mut out = String::new();
    for r in replicas {
        let _ = writeln!(out, "server {r} {params};");
    }
    out
}

fn main_conf(http: &str) -> String {
    format!(
        r#"daemon off;
worker_processes 2;
pid /var/lib/nginx/nginx.pid;
error_log stderr info;
events {{ worker_connections 1024; }}
http {{
    log_format replicas '$msec|$status|$upstream_addr|$upstream_status';
    access_log /dev/stdout replicas;
    client_body_temp_path /var/lib/nginx/body;
    proxy_temp_path /var/lib/nginx/proxy;
    fastcgi_temp_path /var/lib/nginx/fastcgi;
    uwsgi_temp_path /var/lib/nginx/uwsgi;
    scgi_temp_path /var/lib/nginx/scgi;
    {http}
}}
"#
    )
}

fn parse_access(line: &str) -> Option<Access> {
    let mut f = line.split('|');
    let at_ms = f.next()?.parse::<f64>().ok()? * 1000.0;
    let status = f.next()?.parse().ok()?;
    let list = |s: &str| s.split(", ").filter(|x| !x.is_empty() && *x != "-").map(str::to_owned).collect();
    let upstreams = list(f.next()?);
    let upstream_statuses = list(f.next()?);
    Some(Access { at_ms, status, upstreams, upstream_statuses })
}
