//! Heap bytes an idle stream costs while open, and what is left once a burst of them has
//! closed: `subscriptions/listen` POSTs and 2025-era GET streams against the real endpoint
//! (`mcp_runtime::serve` on a loopback port, the client on raw sockets in the same process,
//! so the figures include the client's few hundred bytes per socket: an upper bound).
//! HTTP/2 listen streams too, multiplexed as a gateway or an h2 client sends them (reqwest with
//! prior knowledge, one connection per 250 streams; its own per-stream state is counted too).
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
    let _ = rustls::crypto::ring::default_provider().install_default();
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
            report(what, n, open_bytes, left);
        }
        // HTTP/2: the connection's buffers are shared by its streams.
        let clients: Vec<reqwest::Client> = (0..n.div_ceil(H2_STREAMS_PER_CONNECTION))
            .map(|_| reqwest::Client::builder().http2_prior_knowledge().build().expect("h2 client"))
            .collect();
        drop(open_h2(&clients[0], &addr).await);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let base = live();
        let mut streams = Vec::with_capacity(n);
        for i in 0..n {
            streams.push(open_h2(&clients[i / H2_STREAMS_PER_CONNECTION], &addr).await);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let open_bytes = live() - base;
        // The streams, then their connections (the clients' pools).
        drop(streams);
        drop(clients);
        tokio::time::sleep(Duration::from_millis(500)).await;
        report("listen over HTTP/2", n, open_bytes, live().saturating_sub(base));
    });
}

/// Below the server's 256 concurrent streams per connection.
const H2_STREAMS_PER_CONNECTION: usize = 250;

fn report(what: &str, n: usize, open_bytes: usize, left: usize) {
    println!(
        "{what:<22} {n} open: {:>7.0} B/stream; after they close: {left} B left ({:.0} B/stream)",
        open_bytes as f64 / n as f64,
        left as f64 / n as f64
    );
}

/// A `subscriptions/listen` stream over HTTP/2 whose first event arrived.
async fn open_h2(client: &reqwest::Client, addr: &str) -> reqwest::Response {
    let mut response = client
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen_body())
        .send()
        .await
        .expect("h2 listen");
    assert_eq!(response.status(), 200, "stream refused");
    response.chunk().await.expect("first event").expect("a first event");
    response
}

fn listen_body() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{META}}}}}"#
    )
}

fn listen_request(addr: &str) -> String {
    let body = listen_body();
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
