//! The protection layers of the real binary: request ids, the JSON depth limit, load
//! shedding (503 + Retry-After, long streamed calls hold their slot, listen streams do not),
//! and the request timeout that never cuts an SSE stream.

use std::time::Duration;

use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::{Value, json};

fn with(extra_server: &str, limits: &str) -> String {
    FIXTURES_CONFIG.replace("[server]\n", &format!("[server]\n{extra_server}\n")) + "\n[limits]\n" + limits + "\n"
}

/// `depth` nested arrays around a string.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!("x"), |inner, _| json!([inner]))
}

#[tokio::test]
async fn request_ids_are_echoed_or_generated() {
    let server = Server::start(FIXTURES_CONFIG);
    let mcp = server.mcp();
    let body = mcp.body("tools/list", json!({}));
    let a = mcp.send(&body, &[("x-request-id", Some("abc-123"))]).await;
    assert_eq!(a.headers["x-request-id"], "abc-123");
    let a = mcp.call("tools/list", json!({})).await;
    let generated = a.headers["x-request-id"].to_str().unwrap();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");
    // Refusals carry one too.
    let a = mcp.send(&body, &[("host", Some("evil.example"))]).await;
    assert_eq!(a.status, 403);
    assert!(a.headers.contains_key("x-request-id"));
}

#[tokio::test]
async fn bodies_nested_past_the_limit_are_refused_before_parsing() {
    let server = Server::start(&with("", "max_json_depth = 16"));
    let mcp = server.mcp();
    // The envelope itself is 3 levels (body, params, arguments).
    let a = mcp.tool("echo", json!({"text": "ok", "extra": nested(10)})).await;
    assert_ne!(a.message()["error"]["message"].as_str().map(|m| m.contains("max_json_depth")), Some(true));
    let a = mcp.tool("echo", json!({"text": "deep", "extra": nested(20)})).await;
    assert_eq!((a.status, a.error_code()), (400, Some(-32700)));
    assert!(a.error_message().contains("limits.max_json_depth (16"), "{}", a.error_message());
    // Brackets inside strings are not nesting.
    let a = mcp.tool("echo", json!({"text": "[".repeat(100)})).await;
    assert_eq!(a.status, 200);
}

#[tokio::test]
async fn a_full_server_sheds_load_with_503_and_retry_after() {
    let server = Server::start(&with("sse_keepalive_ms = 300", "max_concurrent_requests = 2\nretry_after_seconds = 3"));
    let mcp = server.mcp();

    // Listen streams do not keep a slot once open.
    let mut listen =
        mcp.open_stream("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    listen.next(Duration::from_secs(5)).await.expect("acknowledgement");

    // Two calls that outlive the keep-alive interval, so they answer as SSE streams: their
    // slots stay taken while the stream runs.
    let slow: Vec<_> = (0..2)
        .map(|_| {
            let mcp = mcp.clone();
            tokio::spawn(async move { mcp.tool("sleep", json!({"ms": 1500})).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(700)).await;

    let a = mcp.call("tools/list", json!({})).await;
    assert_eq!(a.status, 503);
    assert_eq!(a.headers["retry-after"], "3");
    assert_eq!(a.error_code(), Some(-32603));
    assert!(a.error_message().contains("max_concurrent_requests (2)"), "{}", a.error_message());

    for call in slow {
        let answer = call.await.unwrap();
        assert!(answer.is_sse(), "streamed");
        assert_eq!(answer.result()["content"][0]["text"], "slept 1500 ms");
    }
    assert_eq!(mcp.call("tools/list", json!({})).await.status, 200, "slots are free again");
    let metrics = reqwest::get(format!("http://{}/metrics", server.addr)).await.unwrap().text().await.unwrap();
    assert!(metrics.contains("mcp_server_rejected_total{reason=\"overloaded\"} 1"), "{metrics}");
}

#[tokio::test]
async fn the_request_timeout_cuts_json_answers_but_not_sse_streams() {
    let config = with("sse_keepalive_ms = 300", "request_timeout_ms = 1000")
        .replace("call_timeout_ms = 5000", "call_timeout_ms = 10000");
    let server = Server::start(&config);
    let mcp = server.mcp();

    // A client that only takes JSON waits for the whole call: the timeout answers 504.
    let body = mcp.body("tools/call", json!({"name": "sleep", "arguments": {"ms": 3000}}));
    let started = std::time::Instant::now();
    let a = mcp.send(&body, &[("accept", Some("application/json"))]).await;
    assert_eq!((a.status, a.error_code()), (504, Some(-32603)));
    assert!(a.error_message().contains("limits.request_timeout_ms (1000 ms)"), "{}", a.error_message());
    assert!(started.elapsed() < Duration::from_millis(2500));

    // A client that takes SSE gets the head after one keep-alive interval: the stream then
    // runs past the timeout to the result.
    let a = mcp.tool("sleep", json!({"ms": 2000})).await;
    assert!(a.is_sse());
    assert_eq!(a.result()["content"][0]["text"], "slept 2000 ms");
    assert!(String::from_utf8_lossy(&a.raw).contains(": keep-alive"));
}
