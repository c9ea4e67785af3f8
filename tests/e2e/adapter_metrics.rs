//! What adapters observe, as `/metrics` shows it: a killed REST upstream is ejected (and the
//! call retried elsewhere), an upstream 4xx counts as a tool error, and a CLI tool's exits
//! are counted by code (a status, `timeout`), all against real upstreams and programs.

use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::get;
use mcp_e2e::Server;
use mcp_e2e::wait::eventually;
use serde_json::json;

/// An HTTP upstream on loopback with its own Tokio runtime: killing it closes its listener and
/// every connection, like a crashed process.
struct Upstream {
    url: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Upstream {
    /// `/ok` answers JSON, `/missing` 404.
    fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/ok", get(|| async { axum::Json(json!({"fine": true})) }))
            .route("/missing", get(|| async { (StatusCode::NOT_FOUND, "no such thing") }));
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        runtime.spawn(async move {
            axum::serve(tokio::net::TcpListener::from_std(listener).unwrap(), app).await.unwrap();
        });
        Self { url, runtime: Some(runtime) }
    }

    fn kill(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The `/metrics` text of `server`.
async fn metrics(server: &Server) -> String {
    let res = reqwest::get(format!("http://{}/metrics", server.addr)).await.expect("GET /metrics");
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

/// The value of the series `name` with exactly these labels, in this order (the exporter
/// writes them in registration order), or `None` when there is no such series.
fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    let prefix = format!("{name}{{{}}} ", labels.join(","));
    text.lines().find_map(|l| l.strip_prefix(&prefix)).map(|v| v.parse().expect("a number"))
}

/// The labels of upstream `u` of adapter `api`.
fn up(u: &Upstream) -> [(&'static str, &str); 2] {
    [("adapter", "api"), ("upstream", u.url.as_str())]
}

#[tokio::test]
async fn a_killed_upstream_is_counted_as_ejected_and_retried_and_a_4xx_as_a_tool_error() {
    let live = Upstream::start();
    let mut doomed = Upstream::start();
    let server = Server::start(&format!(
        r#"
[[adapters]]
name = "api"
kind = "rest"
base_urls = ["{}", "{}"]
retry = {{ max_attempts = 3, initial_backoff_ms = 10, max_backoff_ms = 50 }}
ejection = {{ consecutive_failures = 1, eject_ms = 600000 }}

[[adapters.tools]]
name = "fine"
description = "Answers."
path = "/ok"

[[adapters.tools]]
name = "gone"
description = "Answers 404."
path = "/missing"
"#,
        live.url, doomed.url
    ));
    let mcp = server.mcp();

    for _ in 0..2 {
        assert_ne!(mcp.tool("fine", json!({})).await.result()["isError"], json!(true));
    }
    let text = metrics(&server).await;
    for u in [&live, &doomed] {
        assert_eq!(series(&text, "mcp_upstream_in_rotation", &up(u)), Some(1.0), "{text}");
        assert_eq!(series(&text, "mcp_upstream_ejections_total", &up(u)), Some(0.0), "{text}");
    }

    doomed.kill();
    for _ in 0..4 {
        let answer = mcp.tool("fine", json!({})).await;
        assert_ne!(answer.result()["isError"], json!(true), "retried on the live upstream: {:?}", answer.messages);
    }
    let text = metrics(&server).await;
    assert_eq!(series(&text, "mcp_upstream_ejections_total", &up(&doomed)), Some(1.0), "{text}");
    assert_eq!(series(&text, "mcp_upstream_in_rotation", &up(&doomed)), Some(0.0), "{text}");
    assert!(series(&text, "mcp_upstream_retries_total", &up(&doomed)) >= Some(1.0), "{text}");
    assert_eq!(series(&text, "mcp_upstream_in_rotation", &up(&live)), Some(1.0), "{text}");
    assert_eq!(series(&text, "mcp_upstream_ejections_total", &up(&live)), Some(0.0), "{text}");

    let answer = mcp.tool("gone", json!({})).await;
    assert_eq!(answer.result()["isError"], json!(true), "{:?}", answer.messages);
    let text = metrics(&server).await;
    let calls = |tool, outcome| [("method", "tools/call"), ("tool", tool), ("outcome", outcome)];
    assert_eq!(series(&text, "mcp_server_requests_total", &calls("gone", "tool_error")), Some(1.0), "{text}");
    assert_eq!(series(&text, "mcp_server_requests_total", &calls("gone", "ok")), Some(0.0), "{text}");
    assert_eq!(series(&text, "mcp_server_requests_total", &calls("fine", "ok")), Some(6.0), "{text}");
}

#[tokio::test]
async fn cli_exits_are_counted_by_code() {
    let server = Server::start(
        r#"
[[adapters]]
name = "shell"
kind = "cli"

[[adapters.tools]]
name = "three"
description = "Exits 3."
executable = "sh"
args = ["-c", "echo failing >&2; exit 3"]

[[adapters.tools]]
name = "fine"
description = "Exits 0."
executable = "true"

[[adapters.tools]]
name = "slow"
description = "Outlives its deadline."
executable = "sleep"
args = ["30"]
timeout_ms = 300
"#,
    );
    let mcp = server.mcp();
    for _ in 0..2 {
        assert_eq!(mcp.tool("three", json!({})).await.result()["isError"], json!(true));
    }
    mcp.tool("fine", json!({})).await;
    mcp.tool("slow", json!({})).await;
    let exits = |tool, code| [("adapter", "shell"), ("tool", tool), ("code", code)];
    let text = eventually(
        Duration::from_secs(5),
        || "the timed-out run is counted".to_owned(),
        || async {
            let text = metrics(&server).await;
            series(&text, "mcp_cli_exits_total", &exits("slow", "timeout")).map(|_| text)
        },
    )
    .await;
    assert_eq!(series(&text, "mcp_cli_exits_total", &exits("three", "3")), Some(2.0), "{text}");
    assert_eq!(series(&text, "mcp_cli_exits_total", &exits("fine", "0")), Some(1.0), "{text}");
    assert_eq!(series(&text, "mcp_cli_exits_total", &exits("slow", "timeout")), Some(1.0), "{text}");
    assert_eq!(series(&text, "mcp_cli_exits_total", &exits("three", "0")), None, "only codes seen have series");
}
