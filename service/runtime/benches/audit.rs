//! Cost of the audit trail on this CPU, which callgrind cannot show: valgrind hides the SHA
//! extensions, so there SHA-256 runs ring's AVX code at several times its real cost. Prices,
//! as on-CPU time of the benchmark thread per call (the least of several rounds):
//! - the writer's call line (formatting and the chain's SHA-256) into `/dev/null`, beside
//!   what SHA-256 of the whole line alone costs;
//! - the same into a file (one `write` a batch, as the writer does);
//! - the request path's digests: the arguments' (serialised, then hashed) and the answer's.
//!
//! The record is loadtest/production.sh's `tools/call echo`: an issuer's caller, a client
//! name, a UUID request id. Run: `cargo bench -p mcp-runtime --bench audit`.

#[path = "support/on_cpu.rs"]
mod on_cpu;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_runtime::config::{AuditConfig, AuditSink};
use mcp_runtime::telemetry::audit::Audit;
use mcp_runtime::telemetry::records::{CallRecord, Text, digest, digest_json};
use on_cpu::on_cpu;
use serde_json::json;

/// Records per batch (the writer drains ~120 every 2 ms at 60 k calls a second).
const BATCH: usize = 128;
/// Batches per round.
const BATCHES: usize = 1_000;
/// Rounds of each sink, interleaved; the least counts.
const ROUNDS: usize = 9;

fn main() {
    let record = record();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("audit.jsonl");
    let trail = |path: &std::path::Path| {
        let config = AuditConfig {
            sink: AuditSink::File { path: path.to_owned(), max_bytes: 0, max_age: None },
            checkpoint_every: 1000,
            checkpoint_interval: Duration::from_secs(60),
            keep: Default::default(),
        };
        // A pod's name as the replica, as in a deployment.
        Audit::open(&config, "mcp-runtime-7d9f8c6b5-x2x7q").expect("the trail opens")
    };
    let batch = vec![record; BATCH];
    // One call line, to hash on its own below.
    let line = {
        let mut audit = trail(&file);
        audit.write(&batch[..1]);
        let text = std::fs::read_to_string(&file).expect("the trail");
        std::fs::remove_file(&file).expect("the trail");
        text.lines().nth(1).expect("a call line").to_owned()
    };
    println!("a call line: {} bytes", line.len());

    // Into /dev/null and into a file, rounds interleaved (this host's noise moves both alike).
    let round = |path: &std::path::Path| {
        let mut audit = trail(path);
        let cpu = on_cpu();
        for _ in 0..BATCHES {
            audit.write(black_box(&batch));
        }
        let spent = on_cpu() - cpu;
        drop(audit);
        spent / u32::try_from(BATCH * BATCHES).expect("fits")
    };
    let (mut null, mut file_) = (Duration::MAX, Duration::MAX);
    for _ in 0..ROUNDS {
        null = null.min(round(std::path::Path::new("/dev/null")));
        file_ = file_.min(round(&file));
        // Each round's trail starts afresh (only the temporary file: /dev/null stays).
        std::fs::remove_file(&file).expect("the round's trail");
    }
    let sha = best(|| {
        let cpu = on_cpu();
        for _ in 0..100_000 {
            black_box(digest(black_box(line.as_bytes())));
        }
        (on_cpu() - cpu) / 100_000
    });
    println!("the writer's call line, formatted and chained, to /dev/null: {:.0} ns a call", nanos(null));
    println!("  of which SHA-256 of the whole line would be: {:.0} ns", nanos(sha));
    println!("the same to a file: {:.0} ns a call", nanos(file_));

    let arguments = json!({"text": "hello from the load test"});
    let body = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello from the load test"}],"structuredContent":{"text":"hello from the load test"},"isError":false,"resultType":"complete"}}"#;
    let digests = best(|| {
        let cpu = on_cpu();
        for _ in 0..100_000 {
            black_box(digest_json(black_box(&arguments)));
            black_box(digest(black_box(body)));
        }
        (on_cpu() - cpu) / 100_000
    });
    println!(
        "the request path's digests (arguments serialised and hashed, a {}-byte answer): {:.0} ns a call",
        body.len(),
        nanos(digests)
    );
}

fn record() -> CallRecord {
    CallRecord {
        at_ms: 1_796_610_760_065,
        finished: Instant::now(),
        method: "tools/call",
        name: Arc::from("echo"),
        endpoint: None,
        caller: Some(Arc::from("https://issuer.loadtest.example#load-tester")),
        client: Some(Text::new("wrk/1.0.0")),
        outcome: "ok",
        error: None,
        duration_us: 41_421,
        adapter: Some(Arc::from("demo")),
        upstream: None,
        request_id: Some(Text::new("b34ff6af-48bd-4def-8c53-5f4d853c57a0")),
        trace_id: None,
        round: 0,
        arguments_digest: Some(digest(b"{\"text\":\"hello from the load test\"}")),
        result_digest: Some(digest(b"the answer")),
        arguments: None,
    }
}

/// The least of five rounds.
fn best(mut round: impl FnMut() -> Duration) -> Duration {
    (0..5).map(|_| round()).min().expect("five rounds")
}

fn nanos(d: Duration) -> f64 {
    d.as_secs_f64() * 1e9
}
