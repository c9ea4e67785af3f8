//! A real nginx (the Debian package) in front of runtime replicas, running the shipped
//! round-robin config `docker/nginx/mcp-runtime.conf` unchanged.
//!
//! Each [`Nginx`] gets a temp directory holding a minimal main `nginx.conf` (pid, logs and
//! temp paths inside it, an access log that records which replica answered), the
//! `mcp-upstream.conf` derived from `docker/nginx/mcp-upstream.compose.conf` (the same
//! `server` parameters, loopback addresses instead of compose host names) and an
//! `mcp-listen.conf` with a free loopback port.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::paths;

/// A running nginx master process (foreground, `daemon off`).
pub struct Nginx {
    child: Child,
    /// Where nginx listens.
    pub addr: SocketAddr,
    /// `http://addr/mcp`.
    pub url: String,
    dir: tempfile::TempDir,
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

/// The nginx binary, or a loud failure: tests never skip a missing part.
pub fn binary() -> PathBuf {
    let candidates = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("nginx")).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/sbin/nginx")]);
    for c in candidates {
        if c.is_file() {
            return c;
        }
    }
    panic!("nginx is not installed: run `apt-get install -y nginx` (tests/run.sh does this before the tests)");
}

impl Nginx {
    /// Starts nginx round-robin over `replicas` with the shipped config.
    pub fn start(replicas: &[SocketAddr]) -> Self {
        let mut last_error = String::new();
        // A port picked free can be taken before nginx binds it: try a few.
        for _ in 0..5 {
            match Self::try_start(replicas) {
                Ok(n) => return n,
                Err(e) => last_error = e,
            }
        }
        panic!("nginx did not start:\n{last_error}");
    }

    fn try_start(replicas: &[SocketAddr]) -> Result<Self, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        // nginx workers run as `nobody` when started by root: let them into the directory.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        write(dir.path(), "mcp-upstream.conf", &upstream_conf(replicas));
        write(dir.path(), "mcp-listen.conf", &format!("listen 127.0.0.1:{port};\n"));
        write(dir.path(), "nginx.conf", &main_conf(dir.path()));

        let d = dir.path();
        let mut child = Command::new(binary())
            .arg("-p")
            .arg(d)
            .arg("-c")
            .arg(d.join("nginx.conf"))
            .arg("-e")
            .arg(d.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(d.join("error.log")).unwrap_or_default();
                return Err(format!("nginx exited with {status}:\n{log}"));
            }
            if TcpStream::connect(addr).is_ok() {
                return Ok(Self { child, addr, url: format!("http://{addr}/mcp"), dir });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        Err("nginx did not accept connections within 10 s".to_owned())
    }

    /// An MCP client that talks to nginx.
    pub fn mcp(&self) -> crate::Mcp {
        crate::Mcp::new(&self.url)
    }

    /// The access log so far.
    pub fn access_log(&self) -> Vec<Access> {
        let text = std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default();
        text.lines().filter_map(parse_access).collect()
    }

    /// The error log so far (connect failures, replicas marked down).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM makes the master stop its workers before it exits; SIGKILL would leave
        // them running, holding the port.
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("write {name}: {e}"));
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

fn main_conf(dir: &Path) -> String {
    let d = dir.display();
    let snippet = paths::repo().join("docker/nginx/mcp-runtime.conf");
    format!(
        r#"daemon off;
worker_processes 2;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 1024; }}
http {{
    log_format replicas '$msec|$status|$upstream_addr|$upstream_status';
    access_log {d}/access.log replicas;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    include {snippet};
}}
"#,
        snippet = snippet.display()
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
