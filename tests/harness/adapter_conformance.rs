//! The adapter-conformance test every adapter kind passes (STYLE.md: one shared test):
//! listed schemas are valid JSON Schemas, names are unique and at most 64 characters, bad
//! arguments are refused before the backend runs, the deadline is honoured and a cancelled
//! call stops the backend's work.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Mcp;
use crate::schema::assert_response;

/// What the shared test needs to know about one adapter under test.
pub struct AdapterUnderTest<'a> {
    /// A client for a runtime serving the adapter.
    pub mcp: Mcp,
    /// Tool names this adapter serves (all must appear in `tools/list`).
    pub tools: &'a [&'a str],
    /// A call whose arguments violate the tool's input schema: `(tool, arguments)`.
    pub bad_call: (&'a str, Value),
    /// How many times the backend really did something so far (processes started, upstream
    /// requests received, ...).
    pub executions: &'a (dyn Fn() -> usize + Sync),
    /// A call that outlives its configured deadline, and that deadline.
    pub slow_call: (&'a str, Value, Duration),
    /// True once the backend work started by slow calls has stopped (no process left, the
    /// upstream saw the request go away, ...).
    pub stopped: &'a (dyn Fn() -> bool + Sync),
}

/// Runs every check; panics with what failed.
pub async fn check(a: AdapterUnderTest<'_>) {
    listing_is_valid(&a).await;
    bad_arguments_never_reach_the_backend(&a).await;
    deadline_is_honoured(&a).await;
    cancellation_stops_the_backend(&a).await;
}

async fn listing_is_valid(a: &AdapterUnderTest<'_>) {
    let mut names = HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let answer = a.mcp.call("tools/list", params).await;
        assert_response("tools/list", answer.message());
        let result = answer.result();
        for tool in result["tools"].as_array().expect("tools array") {
            let name = tool["name"].as_str().expect("name");
            assert!(names.insert(name.to_owned()), "tool name '{name}' listed twice");
            assert!(name.len() <= 64, "tool name '{name}' is longer than 64 characters");
            assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)), "tool name '{name}'");
            assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "tool '{name}' has no description");
            assert_eq!(tool["inputSchema"]["type"], "object", "tool '{name}' inputSchema root");
            jsonschema::validator_for(&tool["inputSchema"])
                .unwrap_or_else(|e| panic!("tool '{name}' inputSchema: {e}"));
            if let Some(out) = tool.get("outputSchema") {
                jsonschema::validator_for(out).unwrap_or_else(|e| panic!("tool '{name}' outputSchema: {e}"));
            }
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    for t in a.tools {
        assert!(names.contains(*t), "tool '{t}' is not listed");
    }
}

async fn bad_arguments_never_reach_the_backend(a: &AdapterUnderTest<'_>) {
    let before = (a.executions)();
    let (tool, args) = &a.bad_call;
    let answer = a.mcp.tool(tool, args.clone()).await;
    assert_eq!(answer.error_code(), Some(-32602), "bad arguments for '{tool}': {:?}", answer.messages);
    assert!(answer.message()["error"]["data"]["field"].is_string(), "the error names the field");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!((a.executions)(), before, "the backend ran for a call with bad arguments");
}

async fn deadline_is_honoured(a: &AdapterUnderTest<'_>) {
    let (tool, args, deadline) = &a.slow_call;
    let started = Instant::now();
    let answer = a.mcp.tool(tool, args.clone()).await;
    let took = started.elapsed();
    assert_eq!(answer.result()["isError"], true, "a call past its deadline is a tool error: {:?}", answer.messages);
    assert!(took < *deadline + Duration::from_millis(1500), "deadline {deadline:?} but the answer took {took:?}");
    wait_until(a.stopped, "the backend work of a timed-out call was not stopped").await;
}

async fn cancellation_stops_the_backend(a: &AdapterUnderTest<'_>) {
    let (tool, args, _) = &a.slow_call;
    let before = (a.executions)();
    // The client gives up after 300 ms: closing the connection is how HTTP clients cancel.
    let call = a.mcp.tool(tool, args.clone());
    assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err(), "the slow call finished too early");
    wait_until(&|| (a.executions)() > before, "the slow call never started").await;
    wait_until(a.stopped, "the backend work of a cancelled call was not stopped").await;
}

async fn wait_until(cond: &(dyn Fn() -> bool + Sync), what: &str) {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}");
}
