//! Cost added per call by the shared-state paths: a result-cache hit in process (L1), and a
//! rate-limit check (local GCRA, and the cluster-wide Redis script against a real
//! `redis-server` this bench starts on a free port, or `REDIS_URL`).
//! Run: `cargo bench -p mcp-runtime --bench shared`.

#[path = "support/on_cpu.rs"]
mod on_cpu;

use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_runtime::cluster::cache::ResultCache;
use mcp_runtime::cluster::ratelimit::RateLimiter;
use mcp_runtime::cluster::redis::Redis;
use mcp_runtime::config::{Limit, RedisConfig, RedisTopology, Secret, ToolLimits};
use mcp_runtime::telemetry::metrics::Metrics;
use on_cpu::on_cpu;

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        l1_hit().await;
        rate_limits().await;
    });
}

async fn l1_hit() {
    let metrics = Metrics::new(&[], false);
    let cache = ResultCache::new(None, &metrics);
    let body = Bytes::from(vec![b'x'; 512]);
    let key = |i: u32| format!("resources/read\u{0}demo://item/{}\u{0}", i % 64);
    for i in 0..64 {
        cache.put(&key(i), body.clone(), Duration::from_secs(600)).await;
    }
    let n = 1_000_000u32;
    let (t, cpu) = (Instant::now(), on_cpu());
    for i in 0..n {
        black_box(cache.get(&key(black_box(i))).await.unwrap());
    }
    report("L1 cache hit (key build + lookup)", n, t.elapsed(), on_cpu() - cpu);
}

async fn rate_limits() {
    let limits = ToolLimits {
        per_caller: Some(Limit { rate: u32::MAX, per: Duration::from_secs(1), burst: u32::MAX }),
        global: Some(Limit { rate: u32::MAX, per: Duration::from_secs(1), burst: u32::MAX }),
    };
    let local = RateLimiter::new(None, None);
    let n = 1_000_000u32;
    let (t, cpu) = (Instant::now(), on_cpu());
    for i in 0..n {
        local
            .check("echo", Some(if i % 2 == 0 { "alice" } else { "bob" }), black_box(limits), Instant::now())
            .await
            .unwrap();
    }
    report("rate limit, local GCRA (both limits)", n, t.elapsed(), on_cpu() - cpu);

    let (url, _server) = redis_url();
    let config = RedisConfig {
        url: Secret::new(url.into_bytes()),
        required: false,
        timeout: Duration::from_secs(1),
        breaker_open: Duration::from_secs(1),
        key_prefix: "bench:".into(),
        topology: RedisTopology::Single,
        username: None,
        password: None,
        tls_ca: None,
    };
    let shared = RateLimiter::new(Some(Arc::new(Redis::new(&config).unwrap())), None);
    for _ in 0..1000 {
        shared.check("echo", Some("alice"), limits, Instant::now()).await.unwrap();
    }
    let n = 20_000u32;
    let (t, cpu) = (Instant::now(), on_cpu());
    for _ in 0..n {
        shared.check("echo", Some("alice"), black_box(limits), Instant::now()).await.unwrap();
    }
    report("rate limit, Redis script (one round trip, loopback)", n, t.elapsed(), on_cpu() - cpu);
}

fn report(what: &str, n: u32, wall: Duration, cpu: Duration) {
    let per = |d: Duration| d.as_secs_f64() * 1e9 / f64::from(n);
    println!("{what}: {:.0} ns wall, {:.0} ns on CPU per call ({n} calls)", per(wall), per(cpu));
}

/// `REDIS_URL`, or a `redis-server` started here (killed when the guard drops).
fn redis_url() -> (String, Option<KillOnDrop>) {
    if let Ok(url) = std::env::var("REDIS_URL") {
        return (url, None);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server on PATH (apt-get install redis-server) or REDIS_URL");
    let guard = KillOnDrop(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (format!("redis://127.0.0.1:{port}"), Some(guard))
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
