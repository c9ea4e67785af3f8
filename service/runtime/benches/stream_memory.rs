//! Heap bytes an idle stream costs while open, and what is left once a burst of them has
//! closed: `subscriptions/listen` POSTs and 2025-era GET streams against the real endpoint
//! (`mcp_runtime::serve` on a loopback port, the client on raw sockets in the same process,
//! so the figures include the client's few hundred bytes per socket: an upper bound).
//! Counts live heap bytes (dhat). `DHAT_PROFILE=1` also writes `dhat-heap.json` (allocation
//! sites at the peak, for <https://nnethercote.github.io/dh_view/dh_view.html>).
//! Run: `cargo bench -p mcp-runtime --bench stream_memory` (`STREAMS=N`, default 1000).

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use mcp_runtime::{AppState, Config};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn live() -> usize {
    dhat::HeapStats::get().curr_bytes
}

const CONFIG: &str = r#"
[server]
max_listen_streams = 100000
[limits]
max_concurrent_requests = 100000
max_connections = 100000
[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"
"#;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn main() {
    let _profiler = if std::env::var_os("DHAT_PROFILE").is_some() {
        dhat::Profiler::new_heap()
    } else {
        dhat::Profiler::builder().testing().build()
    };
    let n: usize = std::env::var("STREAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let config = Config::from_toml(CONFIG).expect("bench config");
        let state = AppState::build(&config).await.expect("state");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(mcp_runtime::serve(listener, state, std::future::pending()));
        let session = legacy_session(&addr).await;
        for (what, request) in [
            ("subscriptions/listen", listen_request(&addr)),
            ("2025-era GET stream", format!(
                "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
            )),
        ] {
            // One stream first, so one-time allocations (pools, metrics) are not counted.
            let warm = open(&addr, &request).await;
            drop(warm);
            tokio::time::sleep(Duration::from_millis(200)).await;
            let base = live();
            let mut streams = Vec::with_capacity(n);
            for _ in 0..n {
                streams.push(open(&addr, &request).await);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            let open_bytes = live() - base;
            drop(streams);
            tokio::time::sleep(Duration::from_millis(500)).await;
            let left = live().saturating_sub(base);
            println!(
                "{what:<22} {n} open: {:>7.0} B/stream; after they close: {left} B left ({:.0} B/stream)",
                open_bytes as f64 / n as f64,
                left as f64 / n as f64
            );
        }
    });
}

fn listen_request(addr: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{META}}}}}"#
    );
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A stream whose response head said 200 and whose first event (or keep-alive) arrived.
async fn open(addr: &str, request: &str) -> BufReader<TcpStream> {
    let mut s = BufReader::with_capacity(256, TcpStream::connect(addr).await.expect("connect"));
    s.get_mut().write_all(request.as_bytes()).await.unwrap();
    let mut line = String::new();
    s.read_line(&mut line).await.unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "stream refused: {line}");
    while line != "\r\n" {
        line.clear();
        s.read_line(&mut line).await.unwrap();
    }
    if request.starts_with("POST") {
        while !line.starts_with("data:") {
            line.clear();
            s.read_line(&mut line).await.unwrap();
        }
    }
    s
}

async fn legacy_session(addr: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let mut s = BufReader::new(TcpStream::connect(addr).await.unwrap());
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.get_mut().write_all(req.as_bytes()).await.unwrap();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(s.read_line(&mut line).await.unwrap() > 0, "initialize answered no Mcp-Session-Id");
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("mcp-session-id:") {
            return line[line.len() - v.len()..].trim().to_owned();
        }
    }
}
