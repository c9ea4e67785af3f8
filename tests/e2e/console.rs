//! The operator console across replicas: with `[redis]`, every replica with the console on
//! publishes a heartbeat and the Overview lists the replicas seen (the browser-level checks
//! are in tests/console/browser.mjs); with the console off there is no route at all.

use std::time::Duration;

use mcp_e2e::redis::RedisServer;
use mcp_e2e::wait::eventually;
use mcp_e2e::{FIXTURES_CONFIG, Server};
use serde_json::Value;

const ADMIN: &str = "console-admin-token-0123456789";

fn config(redis: Option<&str>, console: bool) -> String {
    let mut c = format!("{FIXTURES_CONFIG}\n[[auth.tokens]]\nsubject = \"ops\"\nsecret = \"{ADMIN}\"\n");
    if let Some(url) = redis {
        c.push_str(&format!("\n[redis]\nurl = \"{url}\"\nkey_prefix = \"console-e2e:\"\n"));
    }
    if console {
        c.push_str("\n[console]\nenabled = true\nadmin_subjects = [\"ops\"]\n");
    }
    c
}

async fn overview(s: &Server) -> (u16, Value) {
    let url = format!("http://{}/console/api/overview", s.addr);
    let res = reqwest::Client::new().get(&url).bearer_auth(ADMIN).send().await.expect("GET overview");
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn with_redis_the_overview_lists_every_replica_by_its_heartbeat() {
    let redis = RedisServer::start().await;
    let a = Server::start(&config(Some(&redis.url), true));
    let b = Server::start(&config(Some(&redis.url), true));
    let seen = eventually(
        Duration::from_secs(15),
        || "the overview never listed both replicas".to_owned(),
        || async {
            let (status, o) = overview(&a).await;
            assert_eq!(status, 200, "{o}");
            let replicas = o["replicas"].as_array()?.len();
            (replicas == 2).then_some(o)
        },
    )
    .await;
    assert_eq!(seen["redis"]["up"], true, "{seen}");
    let own = seen["replica"].as_str().unwrap();
    let listed: Vec<&Value> = seen["replicas"].as_array().unwrap().iter().collect();
    assert!(listed.iter().any(|r| r["replica"] == own && r["self"] == true), "{seen}");
    let (_, other) = overview(&b).await;
    assert_ne!(other["replica"], seen["replica"], "two replicas, two ids");
}

#[tokio::test]
async fn off_there_is_no_console_route() {
    let s = Server::start(&config(None, false));
    let (status, _) = overview(&s).await;
    assert_eq!(status, 404);
    let page = reqwest::get(format!("http://{}/console/", s.addr)).await.unwrap();
    assert_eq!(page.status().as_u16(), 404);
}

/// A REST adapter beside the fixtures: two kinds to tell apart (its upstream is never called).
const REST: &str = r#"
[[adapters]]
name = "api"
kind = "rest"
base_urls = ["http://127.0.0.1:9"]

[[adapters.tools]]
name = "ping"
description = "Pings."
path = "/ping"
"#;

async fn api(s: &Server, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new().get(format!("http://{}/console/api/{path}", s.addr));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.expect("GET console api");
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// `serve` drops the adapters' config sections once they are built: the kinds shown are the
/// built adapters' own.
#[tokio::test]
async fn every_adapter_shows_its_real_kind_after_start_up() {
    let s = Server::start(&format!("{}{REST}", config(None, true)));
    let (status, adapters) = api(&s, "adapters", Some(ADMIN)).await;
    assert_eq!(status, 200, "{adapters}");
    let kinds: Vec<(&str, &str)> = adapters["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["kind"].as_str().unwrap_or("null")))
        .collect();
    assert_eq!(kinds, [("conformance", "fixtures"), ("demo", "fixtures"), ("faults", "fixtures"), ("api", "rest")]);
    let (_, catalog) = api(&s, "catalog", Some(ADMIN)).await;
    let kind_of = |tool: &str| {
        let t = catalog["tools"].as_array().unwrap().iter().find(|t| t["tool"]["name"] == tool);
        t.map(|t| t["kind"].clone()).unwrap_or(Value::Null)
    };
    assert_eq!(kind_of("ping"), "rest", "{catalog}");
    assert_eq!(kind_of("echo"), "fixtures");
    for list in ["resources", "resource_templates", "prompts"] {
        for item in catalog[list].as_array().unwrap() {
            assert!(item["kind"].is_string(), "{list}: {item}");
        }
    }
}

/// Every refusal of the console's API leaves a log line, as one at the MCP endpoint does.
#[tokio::test]
async fn api_refusals_are_logged() {
    let s = Server::start(&config(None, true));
    let refusals = || async {
        let log = s.stderr();
        let lines: Vec<String> =
            log.lines().filter(|l| l.contains("console: bearer token refused")).map(str::to_owned).collect();
        lines
    };
    assert_eq!(api(&s, "overview", None).await.0, 401);
    let line = s.log_line("console: bearer token refused").await;
    assert!(line.contains("missing") && line.contains("/console/api/overview"), "{line}");
    assert_eq!(api(&s, "catalog", Some("not-a-token-of-this-server")).await.0, 401);
    let lines = eventually(
        Duration::from_secs(10),
        || format!("no second refusal in the log:\n{}", s.stderr()),
        || async { Some(refusals().await).filter(|l| l.len() == 2) },
    )
    .await;
    assert!(lines[1].contains("unknown") && lines[1].contains("/console/api/catalog"), "{}", lines[1]);
    let user = format!(
        "{}\n[[auth.tokens]]\nsubject = \"alice\"\nsecret = \"console-user-token-0123456789\"\n",
        config(None, true)
    );
    let s = Server::start(&user);
    assert_eq!(api(&s, "overview", Some("console-user-token-0123456789")).await.0, 403);
    let line = s.log_line("console: not an administrator").await;
    assert!(line.contains("alice") && line.contains("/console/api/overview"), "{line}");
}

/// The live feed streams the open page's view: the Overview too (its uptime, a reload).
#[tokio::test]
async fn the_live_feed_streams_the_view_asked_for() {
    use futures_util::StreamExt as _;
    let s = Server::start(&config(None, true));
    let url = format!("http://{}/console/api/events?view=overview", s.addr);
    let res = reqwest::Client::new().get(&url).bearer_auth(ADMIN).send().await.expect("GET events");
    assert_eq!(res.status().as_u16(), 200);
    let mut body = res.bytes_stream();
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk =
            tokio::time::timeout(Duration::from_secs(5), body.next()).await.expect("an update").expect("a chunk");
        text.push_str(&String::from_utf8_lossy(&chunk.expect("bytes")));
    }
    let data = text.lines().find_map(|l| l.strip_prefix("data:")).expect("a data line");
    let update: Value = serde_json::from_str(data.trim()).expect("JSON");
    assert!(update["overview"]["uptime_ms"].is_u64(), "{update}");
    assert!(update.get("calls").is_none(), "only the view asked for: {update}");
    let bad = reqwest::Client::new()
        .get(format!("http://{}/console/api/events?view=nope", s.addr))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);
}

/// Start-up names the console's URL on stdout, beside the `listening on` line.
#[test]
fn start_up_prints_the_console_url() {
    use std::io::{BufRead as _, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config(None, true)).unwrap();
    let mut child = std::process::Command::new(mcp_e2e::paths::runtime_bin())
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--listen", "127.0.0.1:0"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok) {
        let done = line.starts_with("mcp-runtime listening on ");
        lines.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let listening = lines.last().and_then(|l| l.strip_prefix("mcp-runtime listening on ")).expect("the listening line");
    let console = lines.iter().find_map(|l| l.strip_prefix("mcp-runtime console on ")).expect("the console line");
    assert_eq!(console, listening.replace("/mcp", "/console/"), "{lines:?}");
}
