//! The example exchanges of `tests/fixtures/examples/`, written from the public specification
//! (each file names the pages it follows), replayed against the real runtime serving the
//! restaurant-and-weather tools they are written for (`tests/fixtures/examples/server.toml`,
//! fixture set `examples`).
//!
//! A file holds one exchange: the request (headers, body, the schema `$def` it is an instance
//! of) and the response (HTTP status, content type, and each JSON-RPC message with its `$def`).
//! Every request and answer is validated against the official schema of 2026-07-28 (tasks
//! extension types: `tasks:`, the 2025-11-25 schema: `legacy:`) and compared with the file:
//! members listed under `opaque` (server-chosen cursors, sealed state, task ids, timestamps,
//! written `<server-chosen>` in the file) by presence only, error messages by their start (the spec leaves the wording to servers).
//! `{{requestState}}` and `{{taskId}}` in a request stand for what an earlier answer chose.

use std::path::PathBuf;
use std::time::Duration;

use mcp_e2e::schema::{assert_valid, assert_valid_legacy, assert_valid_tasks};
use mcp_e2e::wait::eventually;
use mcp_e2e::{Answer, Mcp, Server, paths};
use serde_json::{Value, json};

fn dir() -> PathBuf {
    paths::repo().join("tests/fixtures/examples")
}

fn server() -> Server {
    let path = dir().join("server.toml");
    Server::start(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())))
}

fn example(name: &str) -> Value {
    let path = dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Validates `value` against `def`: `tasks:X` in the tasks extension, `legacy:X` in the
/// 2025-11-25 schema, else the core schema of 2026-07-28.
fn validate(def: &str, value: &Value) {
    if let Some(def) = def.strip_prefix("tasks:") {
        assert_valid_tasks(def, value);
    } else if let Some(def) = def.strip_prefix("legacy:") {
        assert_valid_legacy(def, value);
    } else {
        assert_valid(def, value);
    }
}

/// Replaces `{{key}}` in every string of `value` (headers and body) with its value.
fn fill(value: &mut Value, bindings: &[(&str, &str)]) {
    match value {
        Value::String(s) => {
            for (key, with) in bindings {
                *s = s.replace(&format!("{{{{{key}}}}}"), with);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| fill(v, bindings)),
        Value::Object(m) => m.values_mut().for_each(|v| fill(v, bindings)),
        _ => {}
    }
}

/// The request of `ex`, with the bindings filled in, validated against its schema.
fn request(ex: &Value, bindings: &[(&str, &str)]) -> (Value, Value) {
    let mut req = ex["request"].clone();
    fill(&mut req, bindings);
    if let Some(def) = req["schema"].as_str() {
        validate(def, &req["body"]);
    }
    (req["headers"].clone(), req["body"].clone())
}

/// Sends the request of example `name` with exactly the headers the file gives.
async fn send(mcp: &Mcp, name: &str, bindings: &[(&str, &str)]) -> (Value, Answer) {
    let ex = example(name);
    let (headers, body) = request(&ex, bindings);
    let pairs: Vec<(String, Vec<u8>)> = headers
        .as_object()
        .expect("request.headers")
        .iter()
        .map(|(k, v)| (k.to_lowercase(), v.as_str().expect("header value").as_bytes().to_vec()))
        .collect();
    let pairs: Vec<(&str, &[u8])> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_slice())).collect();
    let answer = mcp.post_raw(serde_json::to_vec(&body).unwrap(), &pairs).await;
    (ex, answer)
}

/// `value` without the members at `pointers`, each of which must be there; `isError: false`
/// counts as absent (its default).
fn without(mut value: Value, pointers: &[Value], what: &str) -> Value {
    for p in pointers {
        let p = p.as_str().expect("opaque pointer");
        let (parent, key) = p.rsplit_once('/').expect("a JSON pointer");
        let removed = value.pointer_mut(parent).and_then(Value::as_object_mut).and_then(|o| o.remove(key));
        assert!(removed.is_some(), "{what}: {p} is missing");
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

/// One received message against one expected entry: schema, then content.
fn same_message(what: &str, expected: &Value, got: &Value) {
    validate(expected["schema"].as_str().expect("message schema"), got);
    if let Some(def) = expected["resultSchema"].as_str() {
        validate(def, &got["result"]);
    }
    let opaque = expected["opaque"].as_array().cloned().unwrap_or_default();
    let mut got = without(got.clone(), &opaque, what);
    if let Some(prefix) = expected["messageStartsWith"].as_str() {
        let message = got["error"].as_object_mut().and_then(|e| e.remove("message"));
        let message = message.as_ref().and_then(Value::as_str).unwrap_or_else(|| panic!("{what}: no error message"));
        assert!(message.starts_with(prefix), "{what}: error message {message:?} does not start with {prefix:?}");
    }
    assert_eq!(got, without(expected["body"].clone(), &opaque, what), "{what}");
}

/// The whole answer against the file: status, content type, every message in order.
fn check(name: &str, ex: &Value, answer: &Answer) {
    let want = &ex["response"];
    assert_eq!(u64::from(answer.status), want["status"].as_u64().unwrap(), "{name}: HTTP status");
    let content_type = answer.content_type().split(';').next().unwrap_or_default().trim();
    assert_eq!(content_type, want["contentType"].as_str().unwrap(), "{name}: content type");
    let expected = want["messages"].as_array().unwrap();
    assert_eq!(answer.messages.len(), expected.len(), "{name}: messages {:?}", answer.messages);
    for (i, (want, got)) in expected.iter().zip(&answer.messages).enumerate() {
        same_message(&format!("{name} message {i}"), want, got);
    }
}

async fn replay(mcp: &Mcp, name: &str, bindings: &[(&str, &str)]) -> Answer {
    let (ex, answer) = send(mcp, name, bindings).await;
    check(name, &ex, &answer);
    answer
}

#[tokio::test]
async fn discovery_and_the_first_tools_page_match() {
    let s = server();
    let mcp = s.mcp();
    replay(&mcp, "01-discover", &[]).await;
    replay(&mcp, "02-tools-list-first-page", &[]).await;
}

#[tokio::test]
async fn the_mrtr_rounds_and_their_progress_match() {
    let s = server();
    let mcp = s.mcp();
    let round1 = replay(&mcp, "03-mrtr-input-required", &[]).await;
    let state = round1.result()["requestState"].as_str().expect("a sealed requestState").to_owned();
    replay(&mcp, "04-mrtr-retry", &[("requestState", &state)]).await;
    replay(&mcp, "05-mrtr-retry-with-progress", &[("requestState", &state)]).await;
}

#[tokio::test]
async fn the_error_examples_match() {
    let s = server();
    let mcp = s.mcp();
    for name in [
        "06-missing-meta",
        "07-unsupported-version",
        "08-header-mismatch",
        "09-missing-capability",
        "10-removed-ping",
        "11-legacy-initialize",
    ] {
        replay(&mcp, name, &[]).await;
    }
}

#[tokio::test]
async fn the_listen_stream_matches() {
    let mut s = server();
    let mcp = s.mcp();
    let ex = example("12-listen-stream");
    let (_, body) = request(&ex, &[]);
    let mut stream = mcp.open_stream_raw(&body).await;
    assert_eq!(u64::from(stream.status), ex["response"]["status"].as_u64().unwrap());
    assert_eq!(stream.content_type.split(';').next().unwrap().trim(), ex["response"]["contentType"]);
    let ack = stream.next(Duration::from_secs(5)).await.expect("the acknowledgement");
    same_message("12 acknowledgement", &ex["response"]["messages"][0], &ack);

    let after = &ex["afterToolCall"];
    mcp.tool(after["tool"].as_str().unwrap(), json!({})).await;
    let expected = after["messages"].as_array().unwrap();
    let mut got = Vec::new();
    for _ in expected {
        got.push(stream.next(Duration::from_secs(5)).await.expect("a change notification"));
    }
    // The two changes are independent: either order is right.
    for want in expected {
        let at = got.iter().position(|m| m["method"] == want["body"]["method"]).expect("the notification");
        same_message(&format!("12 {}", want["body"]["method"]), want, &got.remove(at));
    }

    s.signal("TERM");
    let closed = stream.next(Duration::from_secs(10)).await.expect("the listen result before the stream ends");
    same_message("12 close", &ex["onShutdown"]["messages"][0], &closed);
    assert!(s.wait_exit(Duration::from_secs(10)).is_some_and(|st| st.success()));
}

#[tokio::test]
async fn the_task_examples_match() {
    let s = server();
    let mcp = s.mcp();
    let created = replay(&mcp, "13-task-created", &[]).await;
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    let (ex, answer) = eventually(
        Duration::from_secs(5),
        || format!("task {id} did not complete within 5 s"),
        || async {
            let (ex, answer) = send(&mcp, "14-task-completed", &[("taskId", &id)]).await;
            (answer.result()["status"] == "completed").then_some((ex, answer))
        },
    )
    .await;
    check("14-task-completed", &ex, &answer);
    assert_eq!(answer.result()["taskId"], json!(id));
}
