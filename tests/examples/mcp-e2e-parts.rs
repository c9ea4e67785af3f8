//! `mcp-e2e-parts`: one of the harness's parts in a container, for a check written in shell
//! (tests/observability/run.sh): it prints where the part listens, one line, then holds it
//! until SIGTERM or SIGINT and removes it. The same code as the Rust tests' parts, so a shell
//! check has no other way to start Redis or Prometheus.
//!
//! Usage: mcp-e2e-parts redis                          → redis://127.0.0.1:PORT
//!        mcp-e2e-parts prometheus CONFIG [FILE...]    → http://127.0.0.1:PORT
//!          (CONFIG: a prometheus.yml; FILEs, the rule files it names, are copied in at their paths)

use std::io::Write as _;
use std::path::PathBuf;

use mcp_e2e::prometheus::Prometheus;
use mcp_e2e::redis::RedisServer;
use tokio::signal::unix::{SignalKind, signal};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    // Each part is dropped (its container removed) before the process ends.
    match args.first().map(String::as_str) {
        Some("redis") => {
            let redis = RedisServer::start().await;
            ready(&redis.url);
            tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
            drop(redis);
        }
        Some("prometheus") if args.len() >= 2 => {
            let config = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| panic!("read {}: {e}", args[1]));
            let files: Vec<PathBuf> = args[2..].iter().map(PathBuf::from).collect();
            let prometheus = Prometheus::start(&config, &files).await;
            ready(&prometheus.url);
            tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
            drop(prometheus);
        }
        _ => {
            eprintln!("usage: mcp-e2e-parts redis | mcp-e2e-parts prometheus CONFIG [FILE...]");
            std::process::exit(2);
        }
    }
}

fn ready(address: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{address}");
    let _ = out.flush();
}
