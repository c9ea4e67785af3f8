//! Cost of the operator console on the MCP path: a whole in-process `tools/call` (static
//! bearer token) with the console off against the same call with the console on and idle
//! (its sampling task running, nobody looking; each call pushes one record into the
//! recent-calls ring). Ratio from one run, interleaved rounds, best of 5.
//! Run: `cargo bench -p mcp-runtime --bench console`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use mcp_runtime::{AppState, Config};
use serde_json::json;
use tower::{Service, ServiceExt};

const TOKEN: &str = "bench-admin-token-0123456789";

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let base = format!(
            "{}\n[[auth.tokens]]\nsubject = \"ops\"\nsecret = \"{TOKEN}\"\n",
            mcp_runtime::config::EMBEDDED_DEFAULT
        );
        let on_toml = format!("{base}\n[console]\nenabled = true\nadmin_subjects = [\"ops\"]\n");
        let off_state = AppState::build(&Config::from_toml(&base).unwrap()).await.unwrap();
        let on_state = AppState::build(&Config::from_toml(&on_toml).unwrap()).await.unwrap();
        assert!(off_state.console.is_none() && on_state.console.is_some());
        mcp_runtime::console::sample::spawn(&on_state);
        let off = mcp_runtime::app(off_state);
        let on = mcp_runtime::app(on_state);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "hi"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        let request = || {
            Request::post("/mcp")
                .header("host", "127.0.0.1:8080")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "echo")
                .header("authorization", format!("Bearer {TOKEN}"))
                .body(Body::from(body.clone()))
                .unwrap()
        };
        for app in [&on, &off] {
            let res = app.clone().oneshot(request()).await.unwrap();
            assert_eq!(res.status(), 200, "bench request refused");
        }
        let n = 20_000u32;
        let (mut best_on, mut best_off) = (Duration::MAX, Duration::MAX);
        for _ in 0..5 {
            for (app, best) in [(&on, &mut best_on), (&off, &mut best_off)] {
                let mut svc = app.clone();
                let t = Instant::now();
                for _ in 0..n {
                    let res = svc.call(request()).await.unwrap();
                    black_box(axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap());
                }
                *best = (*best).min(t.elapsed());
            }
        }
        report("tools/call echo, console off (in process, best of 5)", n, best_off);
        report("tools/call echo, console on and idle (best of 5)", n, best_on);
        println!(
            "throughput ratio console on / off: {:.3} (acceptance: no measurable cost, >= 0.97)",
            best_off.as_secs_f64() / best_on.as_secs_f64()
        );
    });
}

fn report(what: &str, n: u32, elapsed: Duration) {
    println!("{what}: {:.2} µs per op ({n} ops)", elapsed.as_secs_f64() * 1e6 / f64::from(n));
}
