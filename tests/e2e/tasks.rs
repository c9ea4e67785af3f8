//! The tasks extension (`io.modelcontextprotocol/tasks`, modelcontextprotocol.io/extensions/tasks,
//! negotiated as MCP 2026-07-28, basic/versioning describes) end to end: creation, polling,
//! input during a task, cancellation, failures, and capability gating; results checked against
//! the extension's result types (tests/fixtures/schema/tasks-extension.json) on top of the
//! official core schema.

use std::time::Duration;

use mcp_e2e::schema::assert_valid_tasks;
use mcp_e2e::wait::eventually;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

fn with_tasks(mcp: &Mcp) -> Mcp {
    mcp.with_capabilities(json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}))
}

async fn get(mcp: &Mcp, id: &str) -> Value {
    let a = mcp.call("tasks/get", json!({"taskId": id})).await;
    let r = a.result().clone();
    assert_valid_tasks("GetTaskResult", &r);
    r
}

async fn wait_for(mcp: &Mcp, id: &str, status: &str) -> Value {
    let never = || format!("task {id} never reached {status}");
    eventually(Duration::from_secs(10), never, || async {
        let t = get(mcp, id).await;
        (t["status"] == status).then_some(t)
    })
    .await
}

async fn start(mcp: &Mcp, tool: &str, args: Value) -> String {
    let a = mcp.tool(tool, args).await;
    let r = a.result();
    assert_eq!(r["resultType"], "task", "{r}");
    assert_valid_tasks("CreateTaskResult", r);
    assert!(r.get("requestState").is_none() && r.get("inputRequests").is_none());
    assert!(r["ttlMs"].as_u64().is_some_and(|t| t > 0));
    r["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_completes() {
    let s = Server::start(FIXTURES_CONFIG);
    let mcp = with_tasks(&s.mcp());
    let id = start(&mcp, "slow_compute", json!({"seconds": 0.5, "label": "bg"})).await;
    assert!(id.len() > 30, "unguessable ids: {id}");
    assert_eq!(get(&mcp, &id).await["status"], "working");
    let done = wait_for(&mcp, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Computed 'bg' in 0.5 s");
    assert_eq!(done["result"]["resultType"], "complete");
    // Without the extension the same tool answers synchronously.
    let sync = s.mcp().tool("slow_compute", json!({"seconds": 0})).await;
    assert_eq!(sync.result()["resultType"], "complete");
}

#[tokio::test]
async fn input_during_a_task_goes_through_tasks_update() {
    let s = Server::start(FIXTURES_CONFIG);
    let mcp = with_tasks(&s.mcp());
    let id = start(&mcp, "multi_input", json!({})).await;
    let waiting = wait_for(&mcp, &id, "input_required").await;
    let keys: Vec<String> = waiting["inputRequests"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys.len(), 2);
    let ack = mcp
        .call("tasks/update", json!({"taskId": id, "inputResponses": {&keys[0]: {"action": "accept", "content": {"name": "Ada", "confirm": true}}, "stray": {}}}))
        .await;
    assert_eq!(ack.result()["resultType"], "complete");
    assert_valid_tasks("UpdateTaskResult", ack.result());
    let partial = get(&mcp, &id).await;
    assert_eq!(partial["status"], "input_required");
    assert_eq!(partial["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), [&keys[1]]);
    mcp.call("tasks/update", json!({"taskId": id, "inputResponses": {&keys[1]: {"action": "accept", "content": {"name": "Ada", "confirm": true}}}}))
        .await;
    let done = wait_for(&mcp, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Got name Ada, confirmed");
}

#[tokio::test]
async fn cancellation_and_failures_end_tasks() {
    let s = Server::start(FIXTURES_CONFIG);
    let mcp = with_tasks(&s.mcp());
    let id = start(&mcp, "slow_compute", json!({"seconds": 60})).await;
    let ack = mcp.call("tasks/cancel", json!({"taskId": id})).await;
    assert_valid_tasks("CancelTaskResult", ack.result());
    assert_eq!(get(&mcp, &id).await["status"], "cancelled");
    // Cancelling a terminal task is an idempotent ack.
    assert!(mcp.call("tasks/cancel", json!({"taskId": id})).await.error_code().is_none());

    let tool_error = start(&mcp, "failing_job", json!({})).await;
    let t = wait_for(&mcp, &tool_error, "completed").await;
    assert_eq!(t["result"]["isError"], true);
    let protocol_error = start(&mcp, "protocol_error_job", json!({})).await;
    let t = wait_for(&mcp, &protocol_error, "failed").await;
    assert_eq!(t["error"]["code"], -32602);
    assert!(t.get("result").is_none());
}

#[tokio::test]
async fn tasks_need_the_extension_and_a_known_id() {
    let s = Server::start(FIXTURES_CONFIG);
    let plain = s.mcp();
    for method in ["tasks/get", "tasks/cancel"] {
        let a = plain.call(method, json!({"taskId": "tsk_x"})).await;
        assert_eq!((a.status, a.error_code()), (400, Some(-32021)), "{method}");
        assert_eq!(
            a.message()["error"]["data"]["requiredCapabilities"],
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
    }
    let a = plain.tool("failing_job", json!({})).await;
    assert_eq!(a.error_code(), Some(-32021), "task-only tools need the extension");
    let a = with_tasks(&plain).call("tasks/get", json!({"taskId": "tsk_nope"})).await;
    assert_eq!((a.status, a.error_code()), (200, Some(-32602)));
    // Mcp-Name must carry the task id.
    let mcp = with_tasks(&plain);
    let body = mcp.body("tasks/get", json!({"taskId": "tsk_nope"}));
    assert_eq!(mcp.send(&body, &[("mcp-name", Some("other"))]).await.error_code(), Some(-32020));
}

#[tokio::test]
async fn input_is_gathered_before_a_task_starts() {
    let s = Server::start(FIXTURES_CONFIG);
    let mcp = with_tasks(&s.mcp());
    let r1 = mcp.tool("test_tool_with_task", json!({})).await;
    let result = r1.result();
    assert_eq!(result["resultType"], "input_required");
    assert!(result.get("taskId").is_none());
    let key = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let r2 = mcp
        .call(
            "tools/call",
            json!({"name": "test_tool_with_task", "arguments": {}, "requestState": result["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"name": "Alice"}}}}),
        )
        .await;
    let id = r2.result()["taskId"].as_str().unwrap().to_owned();
    let done = wait_for(&mcp, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Task completed for Alice");
}
