//! Long calls survive proxies: a 40 s tool call through a real nginx whose
//! `proxy_read_timeout` is 20 s completes, because the runtime sends an SSE keep-alive
//! comment every 5 s. Slow by nature (40 s): the one such test.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mcp_e2e::nginx::Nginx;
use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::json;

/// nginx proxying to `upstream` with a 20 s read timeout and no buffering.
fn proxy(upstream: SocketAddr) -> Nginx {
    let server = format!(
        r#"server {{
        include mcp-listen.conf;
        location / {{
            proxy_pass http://{upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection "";
            proxy_read_timeout 20s;
            proxy_buffering off;
        }}
    }}"#
    );
    Nginx::start_with(&server, vec![])
}

#[tokio::test]
async fn a_40_second_call_survives_a_20_second_proxy_read_timeout() {
    let config = FIXTURES_CONFIG
        .replace("call_timeout_ms = 5000", "call_timeout_ms = 60000")
        .replace("[server]\n", "[server]\nsse_keepalive_ms = 5000\n");
    let server = Server::start(&config);
    let nginx = proxy(server.addr);

    let proxied = nginx.mcp();
    let started = Instant::now();
    let mut stream = proxied.open_stream("tools/call", json!({"name": "sleep", "arguments": {"ms": 40_000}})).await;
    assert_eq!(stream.status, 200, "through nginx");
    let raw = stream.raw_for(Duration::from_secs(60)).await;
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&raw);

    let messages = mcp_e2e::client::sse_messages(&raw);
    let last = messages.last().unwrap_or_else(|| panic!("no final message after {took:?}: {text:?}"));
    assert_eq!(last["id"], stream.id);
    assert_eq!(last["result"]["content"][0]["text"], "slept 40000 ms", "{last}");
    assert!(took >= Duration::from_secs(40), "the call really lasted past two read timeouts: {took:?}");
    let comments = text.matches(": keep-alive").count();
    assert!(comments >= 7, "a keep-alive comment every 5 s kept nginx reading: {comments} in {took:?}");
}
