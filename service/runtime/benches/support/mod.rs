//! What the in-process `tools/call` benches share: the request (2026-07-28 `echo`, or another
//! tool, with or without a bearer token) and the interleaved best-of-5 comparison of two routers.

use std::hint::black_box;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use mcp_runtime::http::App;
use serde_json::json;
use tower::{Service, ServiceExt};

/// Calls per round; five rounds per side, the best one counts.
const N: u32 = 20_000;

/// One side of a comparison: a router, the `Authorization` value its calls carry and the
/// tool they call.
pub struct Side<'a> {
    label: &'a str,
    app: &'a App,
    authorization: Option<String>,
    tool: String,
    body: String,
}

impl<'a> Side<'a> {
    /// Calls of `echo`.
    pub fn new(label: &'a str, app: &'a App, bearer: Option<&str>) -> Self {
        let (tool, body) = (String::new(), String::new());
        Self { label, app, authorization: bearer.map(|t| format!("Bearer {t}")), tool, body }
            .calling("echo", json!({"text": "hi"}))
    }

    /// Calls of `tool` with `arguments` instead.
    pub fn calling(self, tool: &str, arguments: serde_json::Value) -> Self {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        Self { tool: tool.to_owned(), body, ..self }
    }

    /// The call as a 2026-07-28 client sends it.
    fn request(&self) -> Request<Body> {
        let mut r = Request::post("/mcp")
            .header("host", "127.0.0.1:8080")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", &self.tool);
        if let Some(value) = &self.authorization {
            r = r.header("authorization", value);
        }
        r.body(Body::from(self.body.clone())).unwrap()
    }
}

/// Interleaved rounds of `base` and `other`, best of 5 each; prints both per-call times and
/// the throughput ratio other / base with its acceptance line.
pub async fn compare(base: Side<'_>, other: Side<'_>, acceptance: &str) {
    for side in [&base, &other] {
        let res = side.app.clone().oneshot(side.request()).await.unwrap();
        assert_eq!(res.status(), 200, "bench request refused ({})", side.label);
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        let text = String::from_utf8_lossy(&body);
        assert!(!text.contains("isError") && !text.contains("input_required"), "{}: {text}", side.label);
    }
    let mut best = [Duration::MAX; 2];
    for _ in 0..5 {
        for (side, best) in [&base, &other].into_iter().zip(best.iter_mut()) {
            let mut svc = side.app.clone();
            let t = Instant::now();
            for _ in 0..N {
                let res = svc.call(side.request()).await.unwrap();
                black_box(axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap());
            }
            *best = (*best).min(t.elapsed());
        }
    }
    for (side, best) in [&base, &other].into_iter().zip(best) {
        report(&format!("tools/call {}, {} (in process, best of 5)", side.tool, side.label), N, best);
    }
    println!(
        "throughput ratio {} / {}: {:.3} (acceptance: {acceptance})",
        other.label,
        base.label,
        best[0].as_secs_f64() / best[1].as_secs_f64()
    );
}

pub fn report(what: &str, n: u32, elapsed: Duration) {
    println!("{what}: {:.2} µs per op ({n} ops)", elapsed.as_secs_f64() * 1e6 / f64::from(n));
}
