//! The hand-built exchanges of `../shared/spec/examples/` replayed against the real runtime
//! serving the same restaurant-and-weather tools (fixture set `examples`): each request is
//! sent with the headers `manifest.json` gives, and the answer is compared with the example
//! and validated against the schema `$def` the manifest names. Server-chosen opaque values
//! (`requestState`, cursors, task ids, timestamps) are compared by shape only.

use std::path::PathBuf;
use std::time::Duration;

use mcp_e2e::schema::{assert_valid, assert_valid_tasks};
use mcp_e2e::{Answer, Mcp, Server, paths};
use serde_json::{Value, json};

const CONFIG: &str = r#"
[server]
name = "example-rust-mcp"
version = "0.1.0"
page_size = 2
instructions = "Restaurant and weather utilities. Use book_table to reserve; it may ask the user for a reservation time."

[caching]
tools_list = { ttl_ms = 300000, scope = "public" }

[tasks]
poll_interval_ms = 2000

[[adapters]]
name = "examples"
kind = "fixtures"
set = "examples"
"#;

fn dir() -> PathBuf {
    paths::shared().join("spec/examples")
}

fn example(file: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(file)).unwrap()).unwrap()
}

fn manifest(file: &str) -> Value {
    let m = example("manifest.json");
    m["examples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == file)
        .cloned()
        .unwrap_or_else(|| panic!("{file} not in manifest"))
}

/// Sends request `file` (optionally edited) with the manifest's headers.
async fn send(mcp: &Mcp, file: &str, edit: impl FnOnce(&mut Value)) -> Answer {
    send_with(mcp, file, edit, &[]).await
}

/// Like [`send`], replacing some of the manifest's headers (a server-chosen task id).
async fn send_with(mcp: &Mcp, file: &str, edit: impl FnOnce(&mut Value), replace: &[(&str, &str)]) -> Answer {
    let mut body = example(file);
    edit(&mut body);
    let mut headers = manifest(file)["http"]["headers"].as_object().unwrap().clone();
    for (k, v) in replace {
        headers.insert((*k).to_owned(), json!(v));
    }
    let pairs: Vec<(String, Vec<u8>)> =
        headers.iter().map(|(k, v)| (k.to_lowercase(), v.as_str().unwrap().as_bytes().to_vec())).collect();
    let pairs: Vec<(&str, &[u8])> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_slice())).collect();
    mcp.post_raw(serde_json::to_vec(&body).unwrap(), &pairs).await
}

/// Status and content type the manifest gives for response `file`, and its schema.
fn check_against_manifest(file: &str, answer: &Answer) {
    let m = manifest(file);
    if let Some(status) = m["http"]["status"].as_u64() {
        assert_eq!(u64::from(answer.status), status, "{file}: status");
    }
    for def in m["validateAgainst"].as_array().unwrap() {
        let def = def.as_str().unwrap();
        if m["schema"] == "tasks" {
            assert_valid_tasks(def, &answer.message()["result"]);
        } else {
            assert_valid(def, answer.message());
        }
    }
}

/// `value` without the members at `pointers`; `isError: false` counts as absent (its default).
fn without(mut value: Value, pointers: &[&str]) -> Value {
    for p in pointers {
        let (parent, key) = p.rsplit_once('/').unwrap();
        if let Some(obj) = value.pointer_mut(parent).and_then(Value::as_object_mut) {
            obj.remove(key);
        }
    }
    strip_false_is_error(&mut value);
    value
}

fn strip_false_is_error(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("isError") == Some(&Value::Bool(false)) {
                m.remove("isError");
            }
            m.values_mut().for_each(strip_false_is_error);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_false_is_error),
        _ => {}
    }
}

/// Error responses: the code and `data` exactly; the message starts like the example's (the
/// digest leaves messages to implementations; ours add a hint).
fn same_error(file: &str, answer: &Answer, message_prefix: &str) {
    let expected = example(file);
    let got = answer.message();
    assert_eq!(got["id"], expected["id"], "{file}: id echoed");
    assert_eq!(got["error"]["code"], expected["error"]["code"], "{file}: code");
    assert_eq!(got["error"].get("data"), expected["error"].get("data"), "{file}: data");
    assert!(
        got["error"]["message"].as_str().unwrap().starts_with(message_prefix),
        "{file}: message {}",
        got["error"]["message"]
    );
    check_against_manifest(file, answer);
}

#[tokio::test]
async fn discovery_and_listing_match_the_examples() {
    let s = Server::start(CONFIG);
    let mcp = s.mcp();
    let a = send(&mcp, "01-discover.request.json", |_| {}).await;
    check_against_manifest("01-discover.response.json", &a);
    let (got, want) = (&a.message()["result"], &example("01-discover.response.json")["result"]);
    for key in ["resultType", "supportedVersions", "instructions", "ttlMs", "cacheScope", "_meta"] {
        assert_eq!(got[key], want[key], "discover.{key}");
    }
    // This server has no prompts, so it advertises neither `prompts` nor `completions`.
    for key in ["tools", "resources", "extensions"] {
        assert_eq!(got["capabilities"][key], want["capabilities"][key], "capabilities.{key}");
    }

    let a = send(&mcp, "02-tools-list.request.json", |_| {}).await;
    check_against_manifest("02-tools-list.response.json", &a);
    assert!(a.message()["result"]["nextCursor"].is_string(), "a first page of two with more to come");
    assert_eq!(
        without(a.message().clone(), &["/result/nextCursor"]),
        without(example("02-tools-list.response.json"), &["/result/nextCursor"])
    );
}

#[tokio::test]
async fn the_mrtr_exchange_and_its_progress_match_the_examples() {
    let s = Server::start(CONFIG);
    let mcp = s.mcp();
    let round1 = send(&mcp, "03a-tools-call.request.json", |_| {}).await;
    check_against_manifest("03b-tools-call.input-required.response.json", &round1);
    let state = round1.message()["result"]["requestState"].as_str().expect("a sealed requestState").to_owned();
    assert_eq!(
        without(round1.message().clone(), &["/result/requestState"]),
        without(example("03b-tools-call.input-required.response.json"), &["/result/requestState"])
    );
    let retry = send(&mcp, "03c-tools-call.retry.request.json", |b| b["params"]["requestState"] = json!(state)).await;
    check_against_manifest("03d-tools-call.complete.response.json", &retry);
    assert_eq!(without(retry.message().clone(), &[]), without(example("03d-tools-call.complete.response.json"), &[]));

    // The same retry with a progress token streams the example's progress notification.
    let with_progress = send(&mcp, "03c-tools-call.retry.request.json", |b| {
        b["params"]["requestState"] = json!(state);
        b["params"]["_meta"]["progressToken"] = json!("call-3-progress");
    })
    .await;
    assert!(with_progress.is_sse(), "{:?}", with_progress.messages);
    let progress =
        with_progress.notifications().into_iter().find(|n| n["params"]["progress"] == 2).expect("progress 2 of 3");
    assert_eq!(progress, &example("10-progress.notification.json"));
    assert_valid("ProgressNotification", progress);
}

#[tokio::test]
async fn the_error_examples_match() {
    let s = Server::start(CONFIG);
    let mcp = s.mcp();
    let a = send(&mcp, "04-missing-meta.request.json", |_| {}).await;
    same_error("04-missing-meta.error.response.json", &a, "Invalid params: missing required _meta field(s)");
    let a = send(&mcp, "05-unsupported-version.request.json", |_| {}).await;
    same_error("05-unsupported-version.error.response.json", &a, "Unsupported protocol version");
    let a = send(&mcp, "06-header-mismatch.request.json", |_| {}).await;
    same_error(
        "06-header-mismatch.error.response.json",
        &a,
        example("06-header-mismatch.error.response.json")["error"]["message"].as_str().unwrap(),
    );
    let a = send(&mcp, "07-missing-capability.request.json", |_| {}).await;
    same_error("07-missing-capability.error.response.json", &a, "Missing required client capability");
    let a = send(&mcp, "08-removed-method-ping.request.json", |_| {}).await;
    same_error("08-removed-method-ping.error.response.json", &a, "Method not found: ping");
    // A dual-era server answers the legacy initialize (MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility)
    // instead of the modern-only example's -32022.
    let a = send(&mcp, "12-legacy-initialize.request.json", |_| {}).await;
    assert_eq!(a.status, 200, "{:?}", a.messages);
    assert!(a.result()["protocolVersion"].as_str().is_some_and(|v| v.starts_with("2025-")));
}

#[tokio::test]
async fn the_listen_stream_matches_the_examples() {
    let mut s = Server::start(CONFIG);
    let mcp = s.mcp();
    let body = example("09a-subscriptions-listen.request.json");
    let mut stream = mcp.open_stream_raw(&body).await;
    assert_eq!(stream.status, 200);
    let ack = stream.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(ack, example("09b-subscriptions-acknowledged.notification.json"));
    assert_valid("SubscriptionsAcknowledgedNotification", &ack);

    mcp.tool("update_menu", json!({})).await;
    let mut got =
        vec![stream.next(Duration::from_secs(5)).await.unwrap(), stream.next(Duration::from_secs(5)).await.unwrap()];
    got.sort_by_key(|m| m["method"].as_str().unwrap().to_owned());
    assert_eq!(
        got,
        [example("09d-resources-updated.notification.json"), example("09c-tools-list-changed.notification.json")]
    );

    s.signal("TERM");
    let closed = stream.next(Duration::from_secs(10)).await.expect("the listen response before the stream ends");
    assert_eq!(closed, example("09e-subscriptions-listen.closed.response.json"));
    assert!(s.wait_exit(Duration::from_secs(10)).is_some_and(|st| st.success()));
}

#[tokio::test]
async fn the_task_examples_match() {
    let s = Server::start(CONFIG);
    let mcp = s.mcp();
    let created = send(&mcp, "11a-tasks-tools-call.request.json", |_| {}).await;
    check_against_manifest("11b-tasks-create-task.response.json", &created);
    let volatile =
        ["/result/taskId", "/result/createdAt", "/result/lastUpdatedAt", "/result/statusMessage", "/result/_meta"];
    assert_eq!(
        without(created.message().clone(), &volatile),
        without(example("11b-tasks-create-task.response.json"), &volatile)
    );
    let id = created.message()["result"]["taskId"].as_str().unwrap().to_owned();
    let mut done = Value::Null;
    for _ in 0..50 {
        let a =
            send_with(&mcp, "11c-tasks-get.request.json", |b| b["params"]["taskId"] = json!(id), &[("Mcp-Name", &id)])
                .await;
        done = a.message().clone();
        if done["result"]["status"] == "completed" {
            check_against_manifest("11d-tasks-get.completed.response.json", &a);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let volatile = [
        "/id",
        "/result/taskId",
        "/result/createdAt",
        "/result/lastUpdatedAt",
        "/result/_meta",
        "/result/result/_meta",
    ];
    assert_eq!(without(done, &volatile), without(example("11d-tasks-get.completed.response.json"), &volatile));
}
