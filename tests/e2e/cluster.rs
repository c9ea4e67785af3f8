//! Three replicas sharing one Redis behind a real nginx running the shipped round-robin config
//! (`docker/nginx/mcp-runtime.conf`): the official conformance suite passes through it (the
//! listen stream and the tool that changes the list land on different replicas, so list
//! changes must cross replicas), MRTR rounds complete although each round lands on another
//! replica, and a k6 run keeps going when a replica is killed.
//!
//! Needs a container engine (nginx and Redis run in containers made from the Debian packages),
//! k6 and the interop harness (`tests/interop/setup.sh`); tests/run.sh provides all of them,
//! and a missing one fails the test. The tests share the machine's two cores with
//! k6 and the suite, so they run one at a time (`CLUSTER`), each with its own cluster.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_e2e::nginx::Nginx;
use mcp_e2e::redis::RedisServer;
use mcp_e2e::{Server, paths};
use serde_json::{Value, json};

pub(crate) static CLUSTER: Mutex<()> = Mutex::new(());

/// The key ring every replica shares: a round sealed by one opens on any other.
const SHARED_KEY: &str = "bG9hZHRlc3QtY2x1c3Rlci1rZXktMzItYnl0ZXMhISE=";

/// Replica `n`'s config: the conformance and demo fixtures, a distinct `server.name` (it
/// comes back in every result's `serverInfo`, which is how a test sees who answered).
fn replica_config(n: usize, redis_url: &str) -> String {
    format!(
        r#"
[server]
name = "replica-{n}"

[redis]
url = "{redis_url}"

[[request_state.keys]]
id = "cluster"
secret = "{SHARED_KEY}"

[[adapters]]
name = "conformance"
kind = "fixtures"
set = "conformance"

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"

# The conformance tools again as a virtual endpoint, with demo's `add` renamed and an
# argument fixed (the suite scores it as it scores /mcp).
[[endpoints]]
path = "/mcp/conformance"
adapters = ["conformance", "demo"]
exclude = ["echo"]

[endpoints.tools.add]
name = "add_one"
arguments = {{ b = 1 }}
"#
    )
}

pub(crate) struct Cluster {
    pub(crate) replicas: Vec<Server>,
    pub(crate) nginx: Nginx,
    _redis: RedisServer,
    _runtime: tokio::runtime::Runtime,
}

impl Cluster {
    pub(crate) fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
        let redis = runtime.block_on(RedisServer::start());
        let replicas: Vec<Server> = (1..=3).map(|n| Server::start(&replica_config(n, &redis.url))).collect();
        runtime.block_on(fan_out_connected(&replicas));
        let addrs: Vec<SocketAddr> = replicas.iter().map(|r| r.addr).collect();
        let nginx = Nginx::start(&addrs);
        Self { replicas, nginx, _redis: redis, _runtime: runtime }
    }
}

/// Waits until each replica hears list changes made on the next one: the replicas subscribe
/// to Redis in the background after start-up.
async fn fan_out_connected(replicas: &[Server]) {
    for (i, listener) in replicas.iter().enumerate() {
        let trigger = replicas[(i + 1) % replicas.len()].mcp();
        let mut stream = listener
            .mcp()
            .open_stream("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}))
            .await;
        stream.next(Duration::from_secs(5)).await.expect("listen acknowledgement");
        let mut heard = false;
        for _ in 0..50 {
            trigger.tool("test_trigger_tool_change", json!({})).await;
            if stream.next(Duration::from_millis(200)).await.is_some() {
                heard = true;
                break;
            }
        }
        assert!(heard, "replica {} never heard a change made on another replica through Redis", i + 1);
    }
}

fn served_by(result: &Value) -> String {
    result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_str().unwrap_or("?").to_owned()
}

/// The scenarios, in a module so that tests/run.sh can run them on their own with their
/// report printed (`cargo test -p mcp-e2e --test e2e -- cluster::behind_nginx:: --nocapture
/// --test-threads 1`) and skip them in the workspace run (`--skip behind_nginx::`).
mod behind_nginx {
    use super::*;

    #[test]
    fn conformance_suite_passes_through_nginx() {
        suite_through_nginx("2026-07-28", "tests/conformance-baseline.txt", "/mcp");
    }

    /// 2025-era clients behind round-robin: the session id, the client's answers to
    /// elicitation/sampling (routed through Redis) and the GET stream work on any replica.
    #[test]
    fn legacy_conformance_suite_passes_through_nginx() {
        suite_through_nginx("2025-11-25", "tests/conformance-baseline-2025-11-25.txt", "/mcp");
    }

    /// A virtual endpoint behind round-robin: its sessions, requestState and listen streams
    /// work on any replica as /mcp's do.
    #[test]
    fn conformance_suite_passes_on_a_virtual_endpoint_through_nginx() {
        suite_through_nginx("2026-07-28", "tests/conformance-baseline.txt", "/mcp/conformance");
        suite_through_nginx("2025-11-25", "tests/conformance-baseline-2025-11-25.txt", "/mcp/conformance");
    }

    fn suite_through_nginx(requirements: &str, baseline: &str, path: &str) {
        let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let cluster = Cluster::start();
        let script = paths::repo().join("tests/interop/conformance.sh");
        let url = format!("{}{path}", cluster.nginx.url.trim_end_matches("/mcp"));
        let run = |scenario: Option<&str>| {
            let mut suite = Command::new("bash");
            suite
                .arg(&script)
                .arg(&url)
                .env("INTEROP_DIR", paths::interop_dir())
                .env("CONFORMANCE_REQUIREMENTS", requirements);
            if let Some(scenario) = scenario {
                suite.arg("--force").env("CONFORMANCE_SCENARIO", scenario);
            }
            suite.output().expect("run tests/interop/conformance.sh")
        };
        let out = run(None);
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        // The skills extension's scenarios are in no requirement set: each is run by name, as
        // tests/run.sh runs them against one replica (the baseline lists them).
        if requirements == "2026-07-28" {
            for scenario in ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"] {
                let one = run(Some(scenario));
                let report = String::from_utf8_lossy(&one.stdout);
                assert!(one.status.success(), "{scenario} through nginx failed:\n{report}");
                text.push_str(&report);
            }
        }
        let summary: Vec<&str> = text
            .lines()
            .filter(|l| {
                ["PASS ", "FAIL ", "INFO ", "# "].iter().any(|p| l.starts_with(p))
                    || l.split_once(" passed, ").is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()))
            })
            .collect();
        let scored: Vec<&str> = summary.iter().copied().filter(|l| !l.starts_with("INFO ")).collect();
        println!("conformance {requirements} through nginx ({url}):\n{}", scored.join("\n"));
        assert!(
            out.status.success(),
            "a scored scenario failed through nginx (exit {}; exit 2: the suite is not installed, run `bash tests/interop/setup.sh`)\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );

        // Every scenario the single-replica run must keep passing passes through nginx too.
        let baseline = std::fs::read_to_string(paths::repo().join(baseline)).expect("baseline");
        for scenario in baseline.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let passed = summary.iter().any(|l| {
                l.strip_prefix("PASS ").is_some_and(|r| r == scenario || r.starts_with(&format!("{scenario} ")))
                    || (l.starts_with(&format!("INFO {scenario} [")) && l.ends_with("passing"))
            });
            assert!(passed, "{scenario} passes on one replica but not through nginx");
        }

        // No warnings either: the listen stream and the tool that triggers the change land on
        // different replicas, and the change reaches the stream through Redis.
        for line in &summary {
            assert!(!line.contains(" warning(s): "), "conformance warning through nginx: {line}");
        }
    }

    #[test]
    fn mrtr_rounds_complete_on_different_replicas() {
        let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let cluster = Cluster::start();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
        runtime.block_on(mrtr_flows(&cluster.nginx));
    }

    /// Sequential flows through nginx: with nothing else in flight, round-robin hands each
    /// request to the next replica, so consecutive rounds of a flow meet different replicas.
    async fn mrtr_flows(nginx: &Nginx) {
        let mcp = nginx.mcp();
        let mut everyone = std::collections::BTreeSet::new();

        // greet: 2 rounds, a requestState that only numbers the round. request_state: 2 rounds,
        // the sealed state opened by another replica than the one that sealed it. multi_round:
        // 3 rounds, a fresh sealed state per round, so three replicas in turn.
        for (tool, rounds) in [
            ("greet", 2),
            ("test_input_required_result_request_state", 2),
            ("test_input_required_result_multi_round", 3),
        ] {
            for flow in 0..3 {
                let mut params = json!({"name": tool, "arguments": {}});
                let mut path = Vec::new();
                let mut states = Vec::new();
                let mut done = None;
                for round in 1..=rounds {
                    let answer = mcp.call("tools/call", params.clone()).await;
                    assert_eq!(answer.status, 200, "{tool} round {round}: {:?}", answer.raw);
                    let result = answer.result().clone();
                    path.push(served_by(&result));
                    if result["resultType"] == "complete" {
                        assert_eq!(round, rounds, "{tool} completed after {round} rounds, expected {rounds}: {result}");
                        assert_ne!(result["isError"], true, "{tool} failed: {result}");
                        done = Some(result);
                        break;
                    }
                    assert_eq!(result["resultType"], "input_required", "{tool} round {round}: {result}");
                    let responses = answer_all(&result["inputRequests"]);
                    params = json!({"name": tool, "arguments": {}, "inputResponses": responses});
                    if let Some(state) = result["requestState"].as_str() {
                        states.push(state.to_owned());
                        params["requestState"] = json!(state);
                    }
                }
                let result = done.unwrap_or_else(|| panic!("{tool} did not complete in {rounds} rounds"));
                println!("{tool} flow {flow}: rounds answered by {}", path.join(" → "));
                for pair in path.windows(2) {
                    assert_ne!(pair[0], pair[1], "{tool}: two consecutive rounds on one replica ({path:?})");
                }
                if tool != "greet" {
                    assert_eq!(states.len(), rounds - 1, "{tool}: every input_required round carries a requestState");
                }
                if tool == "greet" {
                    assert_eq!(result["content"][0]["text"], "Hello, e2e!");
                }
                everyone.extend(path);
            }
        }
        assert_eq!(everyone.len(), 3, "all three replicas answered rounds: {everyone:?}");
    }

    /// Accepts each elicitation with `e2e`/`true` for every field, answers sampling and roots.
    fn answer_all(requests: &Value) -> Value {
        let mut out = serde_json::Map::new();
        for (key, req) in requests.as_object().expect("inputRequests object") {
            let answer = match req["method"].as_str() {
                Some("elicitation/create") => {
                    let mut content = serde_json::Map::new();
                    if let Some(props) = req["params"]["requestedSchema"]["properties"].as_object() {
                        for (field, schema) in props {
                            let v = match schema["type"].as_str() {
                                Some("boolean") => json!(true),
                                Some("number" | "integer") => json!(1),
                                _ => json!("e2e"),
                            };
                            content.insert(field.clone(), v);
                        }
                    }
                    json!({"action": "accept", "content": content})
                }
                Some("sampling/createMessage") => json!({
                    "role": "assistant", "content": {"type": "text", "text": "e2e"}, "model": "e2e", "stopReason": "endTurn"
                }),
                Some("roots/list") => json!({"roots": [{"uri": "file:///tmp/e2e", "name": "e2e"}]}),
                other => panic!("unexpected input request method {other:?}"),
            };
            out.insert(key.clone(), answer);
        }
        Value::Object(out)
    }

    #[test]
    fn k6_keeps_going_when_a_replica_is_killed() {
        const VUS: usize = 10;
        let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let mut cluster = Cluster::start();
        let out = tempfile::tempdir().expect("temp dir");
        let summary_path = out.path().join("summary.json");
        let base = format!("http://{}", cluster.nginx.addr);
        let k6 = Command::new(paths::k6())
            .args(["run", "--no-usage-report", "--no-color", "--quiet", "--summary-export"])
            .arg(&summary_path)
            .args(["-e", &format!("BASE_URL={base}"), "-e", &format!("VUS={VUS}"), "-e", "DURATION=8s"])
            // The run's own thresholds allow the few in-flight failures; the assertions below
            // are the precise ones.
            .args(["-e", "MAX_ERROR_RATE=0.05", "-e", "P95_MS=1000"])
            .arg(paths::repo().join("loadtest/scenarios/mixed.js"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn k6");

        std::thread::sleep(Duration::from_secs(3));
        let victim = cluster.replicas[1].addr.to_string();
        let killed_at = now_ms();
        cluster.replicas[1].signal("KILL");
        let _ = cluster.replicas[1].wait_exit(Duration::from_secs(5));

        let k6_out = k6.wait_with_output().expect("wait for k6");
        let k6_text = format!("{}{}", String::from_utf8_lossy(&k6_out.stdout), String::from_utf8_lossy(&k6_out.stderr));
        assert!(k6_out.status.success(), "k6 stopped or its thresholds failed ({}):\n{k6_text}", k6_out.status);

        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(&summary_path).expect("k6 summary")).expect("summary JSON");
        let total = summary["metrics"]["http_reqs"]["count"].as_u64().expect("http_reqs");
        let k6_failed = summary["metrics"]["http_req_failed"]["passes"].as_u64().expect("http_req_failed");

        let log = cluster.nginx.access_log();
        let mcp: Vec<_> = log.iter().filter(|a| !a.upstreams.is_empty()).collect();
        let failures: Vec<_> = mcp.iter().filter(|a| a.status != 200).collect();
        let after_kill = mcp.iter().filter(|a| a.at_ms > killed_at).count();
        let retried: Vec<_> = mcp.iter().filter(|a| a.upstreams.len() > 1).collect();
        let last_failure_ms = failures.iter().map(|a| a.at_ms - killed_at).fold(0.0, f64::max);
        println!(
            "failover: {total} requests, {k6_failed} failed (in flight on {victim} when it was killed; \
             the last one ended {last_failure_ms:.0} ms after the kill); {after_kill} answered after the kill; \
             {} passed on by nginx after a refused connect",
            retried.len()
        );

        assert_eq!(k6_failed as usize, failures.len(), "k6 and nginx count the same failures");
        assert!(failures.len() <= VUS, "at most one request per VU can be in flight: {failures:?}");
        for f in &failures {
            assert_eq!(f.status, 502, "a failure is a replica gone mid-request: {f:?}");
            assert_eq!(f.upstreams.last(), Some(&victim), "only the killed replica's requests fail: {f:?}");
            assert!(f.at_ms >= killed_at - 1.0, "no failure before the kill: {f:?}");
        }
        // nginx marks the replica down on the first failed attempt (max_fails=1); after that it
        // never hands it a request again within fail_timeout, so nothing else fails.
        assert!(last_failure_ms < 1000.0, "failures went on {last_failure_ms:.0} ms after the kill: {failures:?}");
        if !failures.is_empty() {
            assert!(cluster.nginx.error_log().contains("upstream server temporarily disabled"), "nginx marked it down");
        }
        for r in &retried {
            assert_eq!(r.status, 200, "a request refused at connect moves on to a live replica: {r:?}");
        }
        assert!(after_kill > 100, "k6 kept going after the kill ({after_kill} requests)");
        let survivors_after: usize =
            mcp.iter().filter(|a| a.at_ms > killed_at + 1000.0 && a.upstreams.last() != Some(&victim)).count();
        assert!(survivors_after > 0, "the two live replicas answered after the kill");
        assert!(
            mcp.iter().filter(|a| a.at_ms > killed_at + 1000.0).all(|a| a.upstreams.last() != Some(&victim)),
            "nothing was answered by the dead replica"
        );
    }

    fn now_ms() -> f64 {
        SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs_f64() * 1000.0
    }
}
