//! Cost of sealing + opening a typical MRTR `requestState` (AES-256-GCM, key ring, binding).
//! Run: `cargo bench -p mcp-runtime --bench seal`. Prints the mean per round trip, as wall
//! time and as on-CPU time of the benchmark thread (from /proc/thread-self/schedstat), which
//! stays meaningful when other processes compete for the cores.

#[path = "support/on_cpu.rs"]
mod on_cpu;

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_runtime::config::{RequestStateConfig, Secret};
use mcp_runtime::mrtr::{Binding, Sealer};
use on_cpu::on_cpu;
use serde_json::json;

fn main() {
    let sealer = Sealer::new(&RequestStateConfig {
        ttl: Duration::from_secs(600),
        max_bytes: 64 * 1024,
        keys: vec![("k2".into(), Secret::new(vec![7; 32])), ("k1".into(), Secret::new(vec![9; 32]))],
    });
    let args = json!({"region": "eu-west", "restaurant": "Luigi's", "party_size": 4});
    let state = json!({"a": {"round": 2, "name": "Ada", "step": "time"}, "r": {"confirmed": true, "asked": "adapter"}});
    let binding = Binding {
        method: "tools/call",
        target: "book_table",
        arguments: &args,
        principal: Some("alice"),
        endpoint: None,
    };
    let token = sealer.seal(&binding, &state);
    println!("typical token: {} bytes", token.len());
    for _ in 0..2_000 {
        black_box(sealer.open(&sealer.seal(&binding, &state), &binding).unwrap());
    }
    let rounds = 200_000u32;
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        let (start, cpu) = (Instant::now(), on_cpu());
        for _ in 0..rounds {
            let t = sealer.seal(black_box(&binding), black_box(&state));
            black_box(sealer.open(&t, &binding).unwrap());
        }
        best = (best.0.min(start.elapsed()), best.1.min(on_cpu() - cpu));
    }
    let cpu = on_cpu();
    for _ in 0..rounds {
        black_box(sealer.seal(black_box(&binding), black_box(&state)));
    }
    let seal_only = (on_cpu() - cpu) / rounds;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(rounds);
    println!(
        "seal + open per round trip: {:.2} µs on CPU, {:.2} µs wall (best of 5 × {rounds}); seal alone {:.2} µs on CPU",
        us(best.1),
        us(best.0),
        seal_only.as_secs_f64() * 1e6
    );
}
