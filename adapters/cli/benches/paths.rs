//! Benchmark (not a test): the cost of a confined path argument, in one run on one machine.
//!
//! ```text
//! cargo bench -p mcp-adapter-cli --bench paths
//! ```
//!
//! 1. Resolution alone: opening `a/b/c/file` (and the same through a symbolic link inside the
//!    root) beneath a root with `openat2` and with the fallback walk, against a plain
//!    `open(2)` of the same file, in µs per open.
//! 2. A whole call: `cat` of that file as a confined path argument (opened, mapped as
//!    descriptor 3, which makes the spawn fork + exec instead of `posix_spawn`) against the
//!    same call with the path as a plain string argument; calls/s and the ratio.
//!
//! The variants run interleaved in `PATHS_BENCH_ROUNDS` rounds (default 5) so drift in the
//! shared machine's load falls on all of them alike.

use std::hint::black_box;
use std::os::fd::AsFd as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Input, Outcome, ToolCall};
use mcp_adapter_cli::beneath::{self, Method};
use mcp_adapter_cli::{Cli, CliConfig};
use serde_json::{Map, Value, json};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let rounds: usize = env_or("PATHS_BENCH_ROUNDS", 5).max(1);
    let opens: usize = env_or("PATHS_BENCH_OPENS", 20_000);
    let calls: usize = env_or("PATHS_BENCH_CALLS", 1_000);
    let dir = std::env::temp_dir().join(format!("mcp-paths-bench-{}", std::process::id()));
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("a/b/c")).expect("bench tree");
    std::fs::write(root.join("a/b/c/file"), "x").expect("bench file");
    let _ = std::os::unix::fs::symlink("a/b/c", root.join("link"));
    let root_fd = beneath::open_dir(&root).expect("root");
    println!(
        "openat2 available: {}   rounds: {rounds}   opens per variant: {}   calls per variant: {}",
        beneath::kernel_has_openat2(),
        opens / rounds * rounds,
        calls / rounds * rounds
    );

    let open_variants: [(&str, Opener); 5] = [
        ("plain open(2) of the absolute path", {
            let abs = root.join("a/b/c/file");
            Box::new(move || drop(black_box(std::fs::File::open(&abs).expect("open"))))
        }),
        ("beneath, auto: a/b/c/file", bench_open(&root_fd, "a/b/c/file", Method::Auto)),
        ("beneath, walk: a/b/c/file", bench_open(&root_fd, "a/b/c/file", Method::Walk)),
        ("beneath, auto: link/file (a link inside)", bench_open(&root_fd, "link/file", Method::Auto)),
        ("beneath, walk: link/file (a link inside)", bench_open(&root_fd, "link/file", Method::Walk)),
    ];
    let mut open_totals = [Duration::ZERO; 5];
    for _ in 0..rounds {
        for (i, (_, f)) in open_variants.iter().enumerate() {
            let start = Instant::now();
            (0..opens / rounds).for_each(|_| f());
            open_totals[i] += start.elapsed();
        }
    }
    for (i, (label, _)) in open_variants.iter().enumerate() {
        let us = open_totals[i].as_secs_f64() * 1e6 / (opens / rounds * rounds) as f64;
        println!("{label:<48} {us:>8.2} µs per open");
    }

    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let tool = |name: &str, paths: Value| {
        json!({"name": name, "description": "bench", "executable": "cat",
            "input_schema": {"type": "object", "required": ["file"], "properties": {"file": {"type": "string"}}},
            "args": ["--", "{file}"], "paths": paths, "max_concurrent": 1})
    };
    let config: CliConfig = serde_json::from_value(json!({"tools": [
        tool("plain", json!({})),
        tool("confined", json!({"file": {"allowed_roots": [root], "kind": "file"}})),
    ]}))
    .expect("bench config");
    let path = std::env::var("PATH").unwrap_or_default();
    let cli =
        Arc::new(Cli::build(&config, &BuildContext::with_env([("PATH", path)].into_iter().collect())).expect("cli"));
    let plain: Map<String, Value> = json!({"file": root.join("a/b/c/file")}).as_object().cloned().unwrap_or_default();
    let confined: Map<String, Value> = json!({"file": "a/b/c/file"}).as_object().cloned().unwrap_or_default();
    let mut call_totals = [Duration::ZERO; 2];
    for _ in 0..rounds {
        for (i, (name, args)) in [("plain", &plain), ("confined", &confined)].into_iter().enumerate() {
            let start = Instant::now();
            rt.block_on(async {
                for _ in 0..calls / rounds {
                    call(&cli, name, args).await;
                }
            });
            call_totals[i] += start.elapsed();
        }
    }
    let rate = |i: usize| (calls / rounds * rounds) as f64 / call_totals[i].as_secs_f64();
    println!("{:<48} {:>8.0} calls/s", "call: cat <path as a plain string>", rate(0));
    println!("{:<48} {:>8.0} calls/s", "call: cat <confined path, descriptor 3>", rate(1));
    println!("ratio confined / plain:                          {:.2}", rate(1) / rate(0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// One open, repeated by the benchmark.
type Opener = Box<dyn Fn()>;

fn bench_open(root: &std::os::fd::OwnedFd, path: &'static str, method: Method) -> Opener {
    let root = root.try_clone().expect("dup root");
    Box::new(move || drop(black_box(beneath::open(root.as_fd(), Path::new(path), method).expect("open beneath"))))
}

async fn call(cli: &Cli, name: &str, arguments: &Map<String, Value>) {
    let cx = CallContext::detached(Duration::from_secs(30));
    let call = ToolCall { name, arguments, input: Input::default() };
    match cli.call_tool(call, &cx).await.expect("call") {
        Outcome::Complete(r) => assert!(!r.is_error, "{r:?}"),
        Outcome::InputRequired(_) => unreachable!("a CLI tool asked for input"),
    }
}
