//! The audit trail as an operator relies on it: every call of every outcome recorded through
//! three replicas, each replica's trail verifying as a chain; an edited, removed or reordered
//! line found by `mcp-runtime audit verify` at its place; rotation keeping the chain; a sink
//! that blocks never stalling calls (records are dropped and counted instead); a named pipe
//! written to as it is.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_e2e::{Server, paths};
use serde_json::{Value, json};

const TOKEN: &str = "audit-token-of-ada-0123456789";

/// Demo and faults tools behind a static token; `utc_now` needs a scope nobody has, `add`
/// may be called once per replica; the trail in `file`.
fn config(file: &Path, extra: &str) -> String {
    format!(
        r#"{}
[auth]
[[auth.tokens]]
subject = "ada"
secret = "{TOKEN}"

[[adapters]]
name = "clock"
kind = "fixtures"
set = "clock"

[auth.tools.utc_now]
scopes = ["admin"]

[rate_limits.tools.add]
global = {{ rate = 1, per_ms = 600000 }}

[audit]
enabled = true
file = "{}"
checkpoint_every = 4
{extra}
[audit.tools.echo]
keep = ["text"]
"#,
        mcp_e2e::FIXTURES_CONFIG,
        file.display()
    )
}

fn verify(files: &[&Path]) -> std::process::Output {
    Command::new(paths::runtime_bin()).args(["audit", "verify"]).args(files).output().expect("run verify")
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn stop(server: &mut Server) {
    server.signal("TERM");
    assert!(
        server.wait_exit(Duration::from_secs(20)).is_some(),
        "the replica did not stop; its log:\n{}",
        server.stderr()
    );
}

#[tokio::test]
async fn every_call_of_every_outcome_is_in_its_replicas_chain() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = (0..3).map(|i| dir.path().join(format!("replica-{i}.jsonl"))).collect();
    let mut replicas: Vec<Server> = files.iter().map(|f| Server::start(&config(f, ""))).collect();
    // (tool, arguments, outcome), sent round-robin across the three replicas.
    let calls: Vec<(&str, Value, &str)> = vec![
        ("echo", json!({"text": "hello"}), "ok"),
        ("fail_backend", json!({}), "tool_error"),
        ("echo", json!({}), "protocol_error"),
        ("greet", json!({}), "input_required"),
        ("utc_now", json!({}), "denied"),
        ("add", json!({"a": 1, "b": 2}), "ok"),
        ("add", json!({"a": 1, "b": 2}), "ok"),
        ("add", json!({"a": 1, "b": 2}), "ok"),
        ("add", json!({"a": 1, "b": 2}), "rate_limited"),
    ];
    let mut expected: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (tool, args, outcome)) in calls.iter().enumerate() {
        let server = &replicas[i % 3];
        let mcp = server
            .mcp()
            .with_capabilities(json!({"elicitation": {"form": {}}}))
            .with_header("authorization", &format!("Bearer {TOKEN}"));
        // The fourth `add` lands on a replica that already served one.
        let _ = mcp.tool(tool, args.clone()).await;
        *expected.entry(outcome).or_default() += 1;
    }
    for r in &mut replicas {
        stop(r);
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        let out = verify(&[f]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with("ok: 3 call records"),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        for line in lines(f).iter().filter(|l| l["type"] == "call") {
            *seen.entry(line["outcome"].as_str().unwrap().to_owned()).or_default() += 1;
            assert_eq!(line["caller"], "ada", "{line}");
            // A refused call never reached the pipeline: no arguments were read.
            if line["outcome"] != "denied" {
                assert!(line["arguments_digest"].as_str().unwrap().starts_with("sha256:"), "{line}");
            }
            assert!(line["request_id"].is_string(), "{line}");
            if line["name"] == "echo" && line["outcome"] == "ok" {
                assert_eq!(line["arguments"]["text"], "hello", "kept as written: {line}");
                assert!(line["result_digest"].as_str().unwrap().starts_with("sha256:"), "{line}");
            }
        }
    }
    let expected: BTreeMap<String, usize> = expected.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    assert_eq!(seen, expected);
    // Never a token in the trail.
    for f in &files {
        assert!(!std::fs::read_to_string(f).unwrap().contains(TOKEN));
    }
}

#[tokio::test]
async fn verify_names_an_edited_removed_or_reordered_line_and_rotation_keeps_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    let mut server = Server::start(&config(&file, "max_bytes = 2000\n"));
    let mcp = server.mcp().with_header("authorization", &format!("Bearer {TOKEN}"));
    for i in 0..20 {
        assert_eq!(mcp.tool("echo", json!({"text": format!("call {i}")})).await.text(0), format!("call {i}"));
    }
    stop(&mut server);
    let mut all: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    all.sort();
    // `audit.jsonl` sorts first, `audit.jsonl.<time>-<seq>` after it: oldest rotated first, current last.
    let current = all.remove(0);
    all.push(current);
    assert!(all.len() >= 3, "rotated at 2000 bytes: {all:?}");
    let refs: Vec<&Path> = all.iter().map(|p| p.as_path()).collect();
    let out = verify(&refs);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("ok: 20 call records"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The same from the config alone: the file its `[audit]` writes and the rotated ones
    // beside it, oldest first.
    let conf = tempfile::tempdir().unwrap();
    let conf = conf.path().join("c.toml");
    std::fs::write(&conf, config(&file, "max_bytes = 2000\n")).unwrap();
    let verify_config =
        || Command::new(paths::runtime_bin()).arg("--config").arg(&conf).args(["audit", "verify"]).output().unwrap();
    let out = verify_config();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        said.starts_with("ok: 20 call records and ") && said.contains(&format!(" in 1 chain ({} files)", all.len())),
        "{said}"
    );

    // The trail tampered with three ways: each found at the line where the chain breaks.
    let first = &all[0];
    let text = std::fs::read_to_string(first).unwrap();
    let original: Vec<&str> = text.lines().collect();
    let tampered = |lines: Vec<String>, expect_line: usize, why: &str| {
        std::fs::write(first, lines.join("\n") + "\n").unwrap();
        for out in [verify(&refs), verify_config()] {
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(out.status.code(), Some(1), "{why}: {err}");
            assert!(err.contains(&format!("{}:{expect_line}: ", first.display())), "{why}: {err}");
        }
    };
    let mut edited: Vec<String> = original.iter().map(|l| (*l).to_owned()).collect();
    edited[1] = edited[1].replace("call 0", "call X");
    tampered(edited, 3, "edited");
    let mut removed: Vec<String> = original.iter().map(|l| (*l).to_owned()).collect();
    removed.remove(1);
    tampered(removed, 2, "removed");
    let mut swapped: Vec<String> = original.iter().map(|l| (*l).to_owned()).collect();
    swapped.swap(1, 2);
    tampered(swapped, 2, "reordered");
}

#[tokio::test]
async fn a_blocked_sink_never_stalls_calls() {
    // The trail goes to stdout, which nobody reads after the first line: the writer blocks
    // once the pipe is full, the queue (shrunk to 64 here) fills, and records are dropped.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    let cfg = format!("{}\n[audit]\nenabled = true\nsink = \"stdout\"\n", mcp_e2e::FIXTURES_CONFIG);
    std::fs::write(&path, cfg).unwrap();
    let mut child = Command::new(paths::runtime_bin())
        .args(["serve", "--config"])
        .arg(&path)
        .args(["--listen", "127.0.0.1:0"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("MCP_TEST_CALL_RECORD_QUEUE", "64")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let url = loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the runtime ended before listening");
        if let Some(u) = line.strip_prefix("mcp-runtime listening on ") {
            break u.trim().to_owned();
        }
    };
    let mcp = mcp_e2e::Mcp::new(&url);
    let big = "x".repeat(4000);
    let start = Instant::now();
    for _ in 0..400 {
        assert_eq!(mcp.tool("echo", json!({ "text": big })).await.text(0).len(), 4000);
    }
    let took = start.elapsed();
    let metrics = reqwest::get(url.replace("/mcp", "/metrics")).await.unwrap().text().await.unwrap();
    let dropped: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("mcp_call_records_dropped_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0);
    let _ = child.kill();
    let _ = child.wait();
    assert!(dropped > 0.0, "records were dropped and counted:\n{metrics}");
    assert!(took < Duration::from_secs(30), "400 calls took {took:?} with the sink blocked");
}

/// A loopback REST upstream answering `GET /ping`.
async fn ping_upstream() -> String {
    let app = axum::Router::new().route("/ping", axum::routing::get(|| async { axum::Json(json!({"pong": true})) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn a_record_names_its_client_its_upstream_and_each_mrtr_round() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    let upstream = ping_upstream().await;
    let rest = format!(
        "[[adapters]]\nname = \"api\"\nkind = \"rest\"\nbase_urls = [\"{upstream}\"]\n\
         [[adapters.tools]]\nname = \"ping\"\ndescription = \"Ping.\"\npath = \"/ping\"\n"
    );
    let mut server = Server::start(&config(&file, &rest));
    let mcp = server
        .mcp()
        .with_capabilities(json!({"elicitation": {"form": {}}}))
        .with_header("authorization", &format!("Bearer {TOKEN}"));
    assert!(mcp.tool("ping", json!({})).await.text(0).contains("pong"));
    // Three rounds: a first request, then two retries, each answering the last questions.
    let tool = "test_input_required_result_multi_round";
    let mut params = json!({"name": tool, "arguments": {}});
    for answer in [json!({"name": "ada"}), json!({"color": "green"})] {
        let result = mcp.call("tools/call", params.clone()).await.result().clone();
        assert_eq!(result["resultType"], "input_required", "{result}");
        let key = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
        params = json!({"name": tool, "arguments": {},
            "inputResponses": {key: {"action": "accept", "content": answer}},
            "requestState": result["requestState"]});
    }
    let done = mcp.call("tools/call", params).await;
    assert_eq!(done.text(0), "Multi-round complete for ada who likes green");
    stop(&mut server);

    let calls: Vec<Value> = lines(&file).into_iter().filter(|l| l["type"] == "call").collect();
    let ping = &calls[0];
    assert_eq!(ping["name"], "ping");
    assert_eq!(ping["client"], "mcp-e2e/1.0.0", "the harness's clientInfo: {ping}");
    assert_eq!(ping["upstream"], upstream.as_str(), "{ping}");
    let rounds: Vec<(u64, &str)> =
        calls[1..].iter().map(|c| (c["round"].as_u64().unwrap(), c["outcome"].as_str().unwrap())).collect();
    assert_eq!(rounds, [(0, "input_required"), (1, "input_required"), (2, "ok")]);
    assert!(calls[1..].iter().all(|c| c["upstream"].is_null()), "fixtures run in process");
}

/// An OTLP/HTTP logs receiver on loopback: each record's body, in arrival order. With
/// `stall`, it takes every export and never answers.
async fn logs_collector(stall: bool) -> (std::sync::Arc<std::sync::Mutex<Vec<String>>>, String) {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Body;
    use prost::Message as _;
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let got = std::sync::Arc::clone(&bodies);
    let app = axum::Router::new().route(
        "/v1/logs",
        axum::routing::post(move |body: axum::body::Bytes| {
            let got = std::sync::Arc::clone(&got);
            async move {
                if stall {
                    std::future::pending::<()>().await;
                }
                let req = ExportLogsServiceRequest::decode(body).expect("OTLP logs protobuf");
                let mut got = got.lock().unwrap();
                for r in req.resource_logs.into_iter().flat_map(|r| r.scope_logs).flat_map(|s| s.log_records) {
                    assert!(r.event_name.starts_with("mcp.audit."), "{}", r.event_name);
                    match r.body.and_then(|b| b.value) {
                        Some(Body::StringValue(line)) => got.push(line),
                        other => panic!("a log record without a string body: {other:?}"),
                    }
                }
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (bodies, url)
}

fn otlp_config(collector: &str) -> String {
    format!(
        "{}\n[telemetry]\notlp_endpoint = \"{collector}\"\ntraces = false\nmetrics = false\n\n\
         [audit]\nenabled = true\nsink = \"otlp\"\ncheckpoint_every = 4\n",
        mcp_e2e::FIXTURES_CONFIG
    )
}

// Multi-threaded: the collector answers while the test waits for the replica to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trail_sent_to_an_otlp_collector_verifies_there() {
    let (bodies, collector) = logs_collector(false).await;
    let mut server = Server::start(&otlp_config(&collector));
    let mcp = server.mcp();
    for i in 0..10 {
        assert_eq!(mcp.tool("echo", json!({"text": format!("call {i}")})).await.text(0), format!("call {i}"));
    }
    // SIGTERM: the last checkpoint is written and the exporter flushed before the exit.
    stop(&mut server);
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("from-collector.jsonl");
    std::fs::write(&copy, bodies.lock().unwrap().join("\n") + "\n").unwrap();
    let out = verify(&[&copy]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.starts_with("ok: 10 call records"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_collector_never_stalls_calls() {
    let (_, collector) = logs_collector(true).await;
    let server = Server::start(&otlp_config(&collector));
    let mcp = server.mcp();
    // More records than the exporter's queue (2048) holds, while every export hangs; a
    // writer waiting on the collector would hold the calls past the deadline.
    let calls = async {
        for _ in 0..30 {
            let batch = (0..100).map(|_| mcp.tool("echo", json!({"text": "x"})));
            for answer in futures_util::future::join_all(batch).await {
                assert_eq!(answer.text(0), "x");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(120), calls)
        .await
        .expect("3,000 calls answered with the collector stalled");
    server.signal("KILL");
}

#[test]
fn check_refuses_an_otlp_trail_without_a_collector() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, format!("{}\n[audit]\nenabled = true\nsink = \"otlp\"\n", mcp_e2e::FIXTURES_CONFIG)).unwrap();
    let out = Command::new(paths::runtime_bin())
        .args(["check", "--config"])
        .arg(&path)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("audit.sink") && said.contains("set [telemetry] otlp_endpoint"), "{said}");
}

#[tokio::test]
async fn a_trail_into_a_named_pipe_is_checked_without_waiting_waited_for_and_never_rotated() {
    // What a log shipper reads: a FIFO. `check` does not wait for its reader (opening it for
    // writing would), and `serve` writes into it as it is: renaming it at `max_bytes` would
    // move the pipe away and leave a plain file in its place.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trail.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, config(&fifo, "max_bytes = 2000\n")).unwrap();
    let checked = Command::new(paths::runtime_bin())
        .args(["check", "--config"])
        .arg(&cfg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let begun = Instant::now();
    let out = tokio::task::spawn_blocking(move || checked.wait_with_output().unwrap()).await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(begun.elapsed() < Duration::from_secs(20));
    // Nobody reads the pipe for its first seconds: `serve` waits for its reader, and says so.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(3));
            std::fs::read_to_string(fifo).unwrap()
        })
    };
    let mut server = Server::start(&config(&fifo, "max_bytes = 2000\n"));
    let waited = server.log_line("waiting for its reader").await;
    assert!(waited.contains("trail.fifo is a named pipe that nobody reads yet"), "{waited}");
    let mcp = server.mcp().with_header("authorization", &format!("Bearer {TOKEN}"));
    for i in 0..20 {
        assert_eq!(mcp.tool("echo", json!({"text": format!("call {i}")})).await.text(0), format!("call {i}"));
    }
    stop(&mut server);
    let got = dir.path().join("got.jsonl");
    std::fs::write(&got, reader.join().unwrap()).unwrap();
    let out = verify(&[&got]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("20 call records"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["c.toml", "got.jsonl", "trail.fifo"], "nothing was renamed");
}
