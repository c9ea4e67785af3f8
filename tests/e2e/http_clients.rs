//! Real HTTP clients other than HTTP/1.1 ones: curl over HTTP/2 in cleartext with prior
//! knowledge (how meshes and gateways speak h2 upstream), an HTTP/1.1 request without any
//! authority, browser CORS (preflight and answers, for allowed and refused origins), and a
//! call cancelled by an HTTP/2 RST_STREAM stopping its CLI process.

use std::time::Duration;

use mcp_e2e::curl::curl;
use mcp_e2e::procs::{processes_with, unique_seconds};
use mcp_e2e::wait::until;
use mcp_e2e::{Mcp, Server};
use serde_json::{Value, json};

/// A CLI tool that sleeps, beside the fixture sets.
fn config(extra_server: &str) -> String {
    format!(
        r#"
[server]
{extra_server}

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"

[[adapters]]
name = "sleepers"
kind = "cli"

[[adapters.tools]]
name = "sleep"
description = "Sleeps"
executable = "sleep"
args = ["{{seconds}}"]
timeout_ms = 30000
input_schema = {{ type = "object", required = ["seconds"], properties = {{ seconds = {{ type = "string" }} }} }}
"#
    )
}

fn echo(mcp: &Mcp, text: &str) -> Value {
    mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": text}}))
}

#[tokio::test]
async fn http2_prior_knowledge_in_cleartext_is_served() {
    let s = Server::start(&config(""));
    let (version, status, _, body) = curl(&s.url, &["--http2-prior-knowledge"], Some(&echo(&s.mcp(), "over h2c")));
    assert_eq!((version.as_str(), status), ("2", 200), "{body}");
    assert!(body.contains("over h2c"), "{body}");
    // And through a Rust client on one multiplexed connection.
    let h2 = Mcp::over_h2c(&s.url);
    let answers =
        futures_util::future::join_all((0..8).map(|i| h2.tool("echo", json!({"text": format!("n{i}")})))).await;
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a.status, 200);
        assert!(a.result()["content"][0]["text"].as_str().unwrap().contains(&format!("n{i}")), "{:?}", a.messages);
    }
}

#[tokio::test]
async fn http1_without_any_host_is_a_bad_request() {
    let s = Server::start(&config(""));
    // `-H 'Host:'` makes curl leave the header out.
    let (version, status, _, body) = curl(&s.url, &["--http1.1", "-H", "Host:"], Some(&echo(&s.mcp(), "x")));
    assert_eq!((version.as_str(), status), ("1.1", 400), "{body}");
    assert!(body.contains("Host header"), "the error says what to send: {body}");
    // A wrong Host is still the DNS-rebinding refusal.
    let (_, status, _, body) = curl(&s.url, &["--http1.1", "-H", "Host: evil.example"], Some(&echo(&s.mcp(), "x")));
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn cors_answers_allowed_origins_and_nothing_else() {
    let s = Server::start(&config(r#"allowed_origins = ["http://localhost:6274"]"#));
    let preflight = |origin: &str| {
        curl(
            &s.url,
            &[
                "-X",
                "OPTIONS",
                "-H",
                &format!("Origin: {origin}"),
                "-H",
                "Access-Control-Request-Method: POST",
                "-H",
                "Access-Control-Request-Headers: content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, authorization",
            ],
            None,
        )
    };
    let (_, status, headers, _) = preflight("http://localhost:6274");
    assert_eq!(status, 200, "{headers}");
    assert!(headers.contains("access-control-allow-origin: http://localhost:6274"), "{headers}");
    assert!(headers.contains("access-control-allow-methods: post,get,delete"), "{headers}");
    for h in ["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region", "authorization"] {
        assert!(
            headers.lines().any(|l| l.starts_with("access-control-allow-headers:") && l.contains(h)),
            "{h}: {headers}"
        );
    }
    let (_, _, headers, _) = preflight("https://evil.example");
    assert!(!headers.contains("access-control-allow-origin"), "a refused origin gets no CORS answer: {headers}");

    let body = echo(&s.mcp(), "from a page");
    let (_, status, headers, text) = curl(&s.url, &["-H", "Origin: http://localhost:6274"], Some(&body));
    assert_eq!(status, 200, "{text}");
    assert!(headers.contains("access-control-allow-origin: http://localhost:6274"), "{headers}");
    assert!(
        headers.contains("access-control-expose-headers: mcp-session-id,www-authenticate,retry-after"),
        "{headers}"
    );
    let (_, status, headers, _) = curl(&s.url, &["-H", "Origin: https://evil.example"], Some(&body));
    assert_eq!(status, 403);
    assert!(!headers.contains("access-control-allow-origin"), "{headers}");
}

#[tokio::test]
async fn a_stream_reset_by_the_client_stops_the_cli_process() {
    let s = Server::start(&config(""));
    let h2 = Mcp::over_h2c(&s.url);
    let marker = unique_seconds(300);
    let call = tokio::spawn({
        let h2 = h2.clone();
        let marker = marker.clone();
        async move { h2.tool("sleep", json!({"seconds": marker})).await }
    });
    until(
        Duration::from_secs(10),
        || "the tool's process never started".into(),
        || !processes_with(&marker).is_empty(),
    )
    .await;
    // Dropping the response future resets the stream (RST_STREAM CANCEL); the connection stays.
    call.abort();
    until(
        Duration::from_secs(10),
        || format!("the process with {marker} survived the reset"),
        || processes_with(&marker).is_empty(),
    )
    .await;
    let a = h2.tool("echo", json!({"text": "still here"})).await;
    assert_eq!(a.status, 200, "the connection serves other streams after the reset");
}

/// A page that lists and calls tools on `mcp_url` with `fetch`, as a web MCP client does,
/// and writes what it got (or the browser's refusal) into `#out`.
fn page(mcp_url: &str) -> String {
    format!(
        r#"<!doctype html><html><body><pre id="out">pending</pre><script>
const url = "{mcp_url}";
let id = 0;
async function call(method, params) {{
  const meta = {{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {{}}}};
  const headers = {{"content-type": "application/json", "accept": "application/json, text/event-stream",
                   "mcp-protocol-version": "2026-07-28", "mcp-method": method}};
  if (params.name) headers["mcp-name"] = params.name;
  const res = await fetch(url, {{method: "POST", headers,
    body: JSON.stringify({{jsonrpc: "2.0", id: ++id, method, params: {{...params, _meta: meta}}}})}});
  return res.json();
}}
(async () => {{
  const out = document.getElementById("out");
  try {{
    const list = await call("tools/list", {{}});
    const echo = await call("tools/call", {{name: "echo", arguments: {{text: "from chromium"}}}});
    out.textContent = "OK tools=" + list.result.tools.length + " echo=" + echo.result.content[0].text;
  }} catch (e) {{
    out.textContent = "BLOCKED " + e;
  }}
}})();
</script></body></html>"#
    )
}

/// Serves `html` at `/` on a free loopback port; returns the page's origin.
async fn serve_page(html: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(html) }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    origin
}

/// What headless Chromium shows in `#out` after loading `url` and letting its scripts run.
async fn chromium_out(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=15000",
        "--dump-dom",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(url)
    .kill_on_drop(true);
    let run = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("chromium finished within 60 s")
        .expect("chromium is installed (Debian package chromium; tests/run.sh installs it)");
    let dom = String::from_utf8_lossy(&run.stdout);
    let out = dom.split_once(r#"<pre id="out">"#).and_then(|(_, rest)| rest.split_once("</pre>")).map(|(o, _)| o);
    out.unwrap_or_else(|| panic!("no #out in the page: {dom}\n{}", String::from_utf8_lossy(&run.stderr))).to_owned()
}

#[tokio::test]
async fn a_page_on_an_allowed_origin_calls_tools_in_a_real_browser_and_others_read_nothing() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let runtime_port = listener.local_addr().unwrap().port();
    drop(listener);
    let mcp_url = format!("http://127.0.0.1:{runtime_port}/mcp");
    let allowed = serve_page(page(&mcp_url)).await;
    let refused = serve_page(page(&mcp_url)).await;
    let s = Server::start_on(
        &config(&format!(r#"allowed_origins = ["{allowed}"]"#)),
        &[],
        &format!("127.0.0.1:{runtime_port}"),
    );
    assert_eq!(s.url, mcp_url);

    let out = chromium_out(&format!("{allowed}/")).await;
    assert!(out.starts_with("OK tools="), "the allowed page: {out}");
    assert!(out.ends_with("echo=from chromium"), "the allowed page: {out}");
    let out = chromium_out(&format!("{refused}/")).await;
    assert!(out.starts_with("BLOCKED"), "a page from {refused} read an answer: {out}");
}
