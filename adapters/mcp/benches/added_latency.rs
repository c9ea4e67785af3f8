//! Benchmark (not a test): the `mcp` adapter's added latency over calling the same upstream
//! directly, for a hosted stdio server and a remote Streamable HTTP server. The upstream is the
//! reference `server-everything` (installed by tests/interop/setup.sh); the direct client
//! speaks the same 2025-era protocol to its own copy of the server (stdio: its own process;
//! HTTP: its own session), and the two kinds of call are interleaved so drift hits both alike.
//!
//! Run: `bash tests/interop/setup.sh && cargo bench -p mcp-adapter-mcp --bench added_latency`
//! (env: `ITERATIONS`, default 5000 per kind; `INTEROP_DIR`). Prints p50/p90/p99 per kind and
//! the differences in microseconds.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Outcome, ToolCall};
use mcp_adapter_mcp::sse::SseReader;
use mcp_adapter_mcp::{Mcp, McpConfig};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

fn main() {
    let iterations: usize = std::env::var("ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000);
    let dir = std::env::var_os("INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/interop"));
    let node = dir.join("bin/node");
    let script = dir.join("upstreams/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.is_file(), "server-everything is not installed under {}: run tests/interop/setup.sh", dir.display());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let args: Map<String, Value> = json!({"message": "bench"}).as_object().cloned().expect("object");

    println!("mcp adapter added latency: server-everything `echo`, {iterations} calls per kind, interleaved (µs)");
    println!("{:<38}{:>9}{:>9}{:>9}", "", "p50", "p90", "p99");
    runtime.block_on(async {
        // stdio: the adapter's hosted process against a process of our own.
        let config: McpConfig = serde_json::from_value(json!({
            "command": node, "args": [script, "stdio"], "health_interval_ms": 0,
        }))
        .expect("config");
        let adapter = Mcp::build(&config, &BuildContext::default()).expect("adapter");
        adapter.first_catalog(Duration::from_secs(20)).await;
        let direct = DirectStdio::start(&node, &script).await;
        let (d, a) = interleave(iterations, || direct.echo(), || through(&adapter, &args)).await;
        report("stdio", &d, &a);
        drop(adapter);

        // Streamable HTTP: the adapter's session against a session of our own.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut server = tokio::process::Command::new(&node)
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("server-everything");
        let url = format!("http://127.0.0.1:{port}/mcp");
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let config: McpConfig = serde_json::from_value(json!({"url": url})).expect("config");
        let adapter = Mcp::build(&config, &BuildContext::default()).expect("adapter");
        adapter.first_catalog(Duration::from_secs(20)).await;
        let direct = DirectHttp::start(&url).await;
        let (d, a) = interleave(iterations, || direct.echo(), || through(&adapter, &args)).await;
        report("Streamable HTTP", &d, &a);
        let _ = server.kill().await;
    });
}

async fn through(adapter: &Mcp, args: &Map<String, Value>) {
    let cx = CallContext::detached(Duration::from_secs(10));
    let call = ToolCall { name: "echo", arguments: args, input: Default::default() };
    match adapter.call_tool(call, &cx).await.expect("adapter call") {
        Outcome::Complete(CallToolResult { is_error: false, .. }) => {}
        other => panic!("unexpected outcome {other:?}"),
    }
}

async fn interleave<D, A>(
    n: usize,
    mut direct: impl FnMut() -> D,
    mut adapter: impl FnMut() -> A,
) -> (Vec<f64>, Vec<f64>)
where
    D: Future<Output = ()>,
    A: Future<Output = ()>,
{
    for _ in 0..200 {
        direct().await;
        adapter().await;
    }
    let (mut d, mut a) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        direct().await;
        d.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        adapter().await;
        a.push(t.elapsed().as_secs_f64() * 1e6);
    }
    (d, a)
}

fn report(label: &str, direct: &[f64], adapter: &[f64]) {
    let pct = |v: &[f64], p: f64| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[((s.len() as f64 - 1.0) * p).round() as usize]
    };
    let row =
        |name: &str, v: &[f64]| println!("{name:<38}{:>9.1}{:>9.1}{:>9.1}", pct(v, 0.5), pct(v, 0.9), pct(v, 0.99));
    row(&format!("{label}: direct"), direct);
    row(&format!("{label}: through the adapter"), adapter);
    println!(
        "{:<38}{:>9.1}{:>9.1}{:>9.1}",
        format!("{label}: added"),
        pct(adapter, 0.5) - pct(direct, 0.5),
        pct(adapter, 0.9) - pct(direct, 0.9),
        pct(adapter, 0.99) - pct(direct, 0.99)
    );
}

/// A bare stdio client: its own server process, one line per message.
struct DirectStdio {
    _child: tokio::process::Child,
    pipes: tokio::sync::Mutex<(tokio::process::ChildStdin, BufReader<tokio::process::ChildStdout>, u64)>,
}

impl DirectStdio {
    async fn start(node: &PathBuf, script: &PathBuf) -> Self {
        let mut child = tokio::process::Command::new(node)
            .arg(script)
            .arg("stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("server-everything");
        let (stdin, stdout) = (child.stdin.take().unwrap(), BufReader::new(child.stdout.take().unwrap()));
        let me = Self { _child: child, pipes: tokio::sync::Mutex::new((stdin, stdout, 1)) };
        let hello = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}});
        me.request("initialize", hello).await;
        me.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        me
    }

    async fn send(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        let mut pipes = self.pipes.lock().await;
        pipes.0.write_all(&line).await.unwrap();
        pipes.0.flush().await.unwrap();
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let mut pipes = self.pipes.lock().await;
        let id = pipes.2;
        pipes.2 += 1;
        let mut line =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        line.push(b'\n');
        pipes.0.write_all(&line).await.unwrap();
        pipes.0.flush().await.unwrap();
        let mut answer = String::new();
        loop {
            answer.clear();
            assert!(pipes.1.read_line(&mut answer).await.unwrap() > 0, "the server exited");
            let m: Value = serde_json::from_str(&answer).unwrap();
            if m["id"] == id && m.get("method").is_none() {
                return m;
            }
        }
    }

    async fn echo(&self) {
        let r = self.request("tools/call", json!({"name": "echo", "arguments": {"message": "bench"}})).await;
        assert!(r["result"]["content"].is_array(), "{r}");
    }
}

/// A bare Streamable HTTP client with its own 2025-era session.
struct DirectHttp {
    client: reqwest::Client,
    url: String,
    session: String,
}

impl DirectHttp {
    async fn start(url: &str) -> Self {
        mcp_adapter_rest::client::ensure_crypto_provider();
        let client = reqwest::Client::builder().tcp_nodelay(true).no_proxy().build().unwrap();
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
        let r =
            client.post(url).header("accept", "application/json, text/event-stream").json(&body).send().await.unwrap();
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let _ = r.bytes().await;
        let me = Self { client, url: url.to_owned(), session };
        let done = me.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert!(done.status().is_success());
        me
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        self.client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(body)
            .send()
            .await
            .unwrap()
    }

    async fn echo(&self) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "bench"}}});
        let r = self.post(&body).await;
        let mut events = SseReader::new(Box::pin(r.bytes_stream()), 1 << 20);
        while let Some(data) = events.next_data().await.unwrap() {
            let m: Value = serde_json::from_str(&data).unwrap();
            if m["id"] == 1 {
                assert!(m["result"]["content"].is_array(), "{m}");
                return;
            }
        }
        panic!("no answer");
    }
}
