//! A real Redis for tests. `REDIS_URL` names an external one; otherwise a container when a
//! Docker daemon is reachable (testcontainers), otherwise a local `redis-server` on a free
//! loopback port, installed with apt when missing. Never skipped: no Redis, no test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use testcontainers_modules::redis::Redis as RedisImage;
use testcontainers_modules::testcontainers::ContainerAsync;
use testcontainers_modules::testcontainers::runners::AsyncRunner;

enum Backend {
    External,
    Local { child: Option<Child>, dir: tempfile::TempDir },
    Container(Box<ContainerAsync<RedisImage>>),
}

/// A Redis server for one test.
pub struct RedisServer {
    backend: Backend,
    /// `redis://127.0.0.1:PORT`.
    pub url: String,
    port: u16,
}

impl RedisServer {
    /// Starts (or finds) a Redis.
    pub async fn start() -> Self {
        if let Ok(url) = std::env::var("REDIS_URL") {
            let port = url.rsplit(':').next().and_then(|p| p.trim_end_matches('/').parse().ok()).unwrap_or(6379);
            return Self { backend: Backend::External, url, port };
        }
        if docker_reachable() {
            let node = RedisImage::default().start().await.expect("start the Redis container");
            let port = node.get_host_port_ipv4(6379).await.expect("container port");
            let server =
                Self { backend: Backend::Container(Box::new(node)), url: format!("redis://127.0.0.1:{port}"), port };
            server.wait_until_up();
            return server;
        }
        let port = free_port();
        let dir = tempfile::tempdir().expect("temp dir");
        let mut server =
            Self { backend: Backend::Local { child: None, dir }, url: format!("redis://127.0.0.1:{port}"), port };
        server.spawn_local();
        server
    }

    /// Stops it (outage tests). Needs a Redis this test owns.
    pub async fn stop(&mut self) {
        match &mut self.backend {
            Backend::External => {
                panic!("REDIS_URL points at an external Redis; this test must stop Redis: unset REDIS_URL")
            }
            Backend::Local { child, .. } => {
                if let Some(mut c) = child.take() {
                    let _ = c.kill();
                    let _ = c.wait();
                }
            }
            Backend::Container(node) => node.stop().await.expect("stop the Redis container"),
        }
    }

    /// Starts it again on the same port, empty.
    pub async fn restart(&mut self) {
        match &mut self.backend {
            Backend::External => {
                panic!("REDIS_URL points at an external Redis; this test must restart Redis: unset REDIS_URL")
            }
            Backend::Local { .. } => self.spawn_local(),
            Backend::Container(node) => {
                node.start().await.expect("restart the Redis container");
                self.wait_until_up();
            }
        }
    }

    fn spawn_local(&mut self) {
        let Backend::Local { child, dir } = &mut self.backend else { unreachable!("local backend") };
        let bin = redis_server_binary();
        let spawned = Command::new(bin)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        *child = Some(spawned);
        self.wait_until_up();
    }

    fn wait_until_up(&self) {
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if ping(self.port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("Redis did not answer PING on port {}", self.port);
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Backend::Local { child: Some(c), .. } = &mut self.backend {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

fn docker_reachable() -> bool {
    Command::new("docker").arg("info").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// `redis-server` from PATH, installed with apt (as root) when missing.
pub fn redis_server_binary() -> &'static str {
    let found =
        || Command::new("redis-server").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if !found() {
        let installed = Command::new("sh")
            .args(["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            installed && found(),
            "redis-server is missing and could not be installed: run `apt-get install redis-server` (tests/run.sh does)"
        );
    }
    "redis-server"
}
