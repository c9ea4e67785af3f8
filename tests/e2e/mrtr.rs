//! MRTR across replicas (MCP 2026-07-28, basic/patterns/mrtr): a round started on one instance
//! finishes on another that holds the same key ring; a different ring, a tampered, expired or
//! replayed state is refused with a message that says which; the runtime's own questions
//! (confirmation, missing arguments) work for any tool.

use mcp_e2e::schema::assert_response;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

const KEY_A: &str = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="; // 32 × 'A'
const KEY_B: &str = "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI="; // 32 × 'B'

fn with_ring(keys: &[(&str, &str)], extra: &str) -> String {
    let mut c = FIXTURES_CONFIG.to_owned();
    c.push_str(extra);
    for (id, secret) in keys {
        c.push_str(&format!("\n[[request_state.keys]]\nid = \"{id}\"\nsecret = \"{secret}\"\n"));
    }
    c
}

/// Round 1 of the multi-round fixture on `a`; returns the first key and the state.
async fn round_one(a: &Mcp) -> (String, String) {
    let r1 = a.tool("test_input_required_result_multi_round", json!({})).await;
    assert_response("tools/call", r1.message());
    let result = r1.result();
    assert_eq!(result["resultType"], "input_required");
    let key = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    (key, result["requestState"].as_str().unwrap().to_owned())
}

fn retry(key: &str, state: &str, content: Value) -> Value {
    json!({"name": "test_input_required_result_multi_round", "arguments": {},
           "inputResponses": {key: {"action": "accept", "content": content}}, "requestState": state})
}

#[tokio::test]
async fn any_replica_with_the_key_ring_continues_a_round() {
    let a = Server::start(&with_ring(&[("k1", KEY_A)], ""));
    let b = Server::start(&with_ring(&[("k1", KEY_A)], ""));
    let (key, state) = round_one(&a.mcp()).await;
    let r2 = b.mcp().call("tools/call", retry(&key, &state, json!({"name": "Ada"}))).await;
    let result = r2.result();
    assert_eq!(result["resultType"], "input_required", "round 2 asks again: {result}");
    let key2 = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let state2 = result["requestState"].as_str().unwrap();
    assert_ne!(state2, state, "each round mints a new state");
    // Round 3 back on A.
    let r3 = a.mcp().call("tools/call", retry(&key2, state2, json!({"color": "blue"}))).await;
    assert_eq!(r3.result()["content"][0]["text"], "Multi-round complete for Ada who likes blue");
}

#[tokio::test]
async fn rotation_keeps_old_tokens_valid() {
    let old = Server::start(&with_ring(&[("k1", KEY_A)], ""));
    let rotated = Server::start(&with_ring(&[("k2", KEY_B), ("k1", KEY_A)], ""));
    let (key, state) = round_one(&old.mcp()).await;
    assert!(state.starts_with("v1.k1."));
    let r2 = rotated.mcp().call("tools/call", retry(&key, &state, json!({"name": "Ada"}))).await;
    let next = r2.result()["requestState"].as_str().unwrap().to_owned();
    assert!(next.starts_with("v1.k2."), "the rotated ring seals with its first key: {next}");
}

#[tokio::test]
async fn foreign_tampered_and_replayed_states_are_refused_with_the_reason() {
    let a = Server::start(&with_ring(&[("k1", KEY_A)], ""));
    let same_id_other_secret = Server::start(&with_ring(&[("k1", KEY_B)], ""));
    let other_id = Server::start(&with_ring(&[("k9", KEY_A)], ""));
    let (key, state) = round_one(&a.mcp()).await;
    let expect = |answer: &mcp_e2e::Answer, needle: &str| {
        assert_eq!(answer.error_code(), Some(-32602), "{:?}", answer.messages);
        assert!(answer.error_message().contains(needle), "'{}' should say '{needle}'", answer.error_message());
        assert_eq!(answer.message()["error"]["data"]["reason"], "invalid_request_state");
    };
    let body = retry(&key, &state, json!({"name": "Ada"}));
    expect(&same_id_other_secret.mcp().call("tools/call", body.clone()).await, "integrity");
    expect(&other_id.mcp().call("tools/call", body.clone()).await, "key 'k1'");
    let mut tampered = body.clone();
    tampered["requestState"] = json!(format!("{state}-TAMPERED"));
    expect(&a.mcp().call("tools/call", tampered).await, "requestState");
    // Replayed with other arguments, or for another tool.
    let mut other_args = body.clone();
    other_args["arguments"] = json!({"x": 1});
    expect(&a.mcp().call("tools/call", other_args).await, "different arguments");
    let mut other_tool = body;
    other_tool["name"] = json!("test_input_required_result_request_state");
    let answer = a.mcp().send(&a.mcp().body("tools/call", other_tool), &[]).await;
    expect(&answer, "issued for tools/call 'test_input_required_result_multi_round'");
}

#[tokio::test]
async fn expired_states_are_refused() {
    let a = Server::start(&with_ring(&[("k1", KEY_A)], "\n[request_state]\nttl_seconds = 1\n"));
    let (key, state) = round_one(&a.mcp()).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let answer = a.mcp().call("tools/call", retry(&key, &state, json!({"name": "Ada"}))).await;
    assert_eq!(answer.error_code(), Some(-32602));
    assert!(answer.error_message().contains("expired"), "{}", answer.error_message());
}

#[tokio::test]
async fn confirmation_is_asked_before_the_tool_runs() {
    let s = Server::start(&format!("{FIXTURES_CONFIG}\n[tool_policies.echo]\nconfirm = true\n"));
    let mcp = s.mcp();
    let r1 = mcp.tool("echo", json!({"text": "rm -rf"})).await;
    let result = r1.result();
    assert_eq!(result["resultType"], "input_required");
    let (key, request) = result["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert!(request["params"]["message"].as_str().unwrap().contains("rm -rf"), "the user sees the arguments");
    let state = result["requestState"].as_str().unwrap();
    let answer = |content: Value, action: &str| {
        json!({"name": "echo", "arguments": {"text": "rm -rf"}, "requestState": state,
               "inputResponses": {key.as_str(): {"action": action, "content": content}}})
    };
    let yes = mcp.call("tools/call", answer(json!({"confirm": true}), "accept")).await;
    assert_eq!(yes.result()["content"][0]["text"], "rm -rf");
    let no = mcp.call("tools/call", answer(json!({}), "decline")).await;
    assert_eq!(no.result()["isError"], true);
    // A client cannot pre-confirm without the sealed question.
    let forged = json!({"name": "echo", "arguments": {"text": "x"}, "inputResponses": {key.as_str(): {"action": "accept", "content": {"confirm": true}}}});
    assert_eq!(mcp.call("tools/call", forged).await.result()["resultType"], "input_required");
    // Without form elicitation the tool cannot be confirmed: -32021.
    let bare = mcp.with_capabilities(json!({})).tool("echo", json!({"text": "x"})).await;
    assert_eq!((bare.status, bare.error_code()), (400, Some(-32021)));
}

#[tokio::test]
async fn missing_arguments_are_asked_for_through_a_form() {
    let s = Server::start(&format!(
        "{FIXTURES_CONFIG}\n[tool_policies.echo]\nelicit_missing_arguments = true\nconfirm = true\n"
    ));
    let mcp = s.mcp();
    let r1 = mcp.tool("echo", json!({})).await;
    let result = r1.result();
    let (key, request) = result["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(request["params"]["requestedSchema"]["required"], json!(["text"]));
    assert_eq!(request["params"]["requestedSchema"]["properties"]["text"]["type"], "string");
    // Round 2 fills the argument; the confirmation comes next and must show it.
    let r2 = mcp
        .call(
            "tools/call",
            json!({"name": "echo", "arguments": {}, "requestState": result["requestState"],
            "inputResponses": {key.as_str(): {"action": "accept", "content": {"text": "from the form"}}}}),
        )
        .await;
    let result = r2.result();
    let (key, request) = result["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert!(request["params"]["message"].as_str().unwrap().contains("from the form"));
    // Round 3 (the client re-sends its original, empty arguments): the elicited value was carried.
    let r3 = mcp
        .call(
            "tools/call",
            json!({"name": "echo", "arguments": {}, "requestState": result["requestState"],
            "inputResponses": {key.as_str(): {"action": "accept", "content": {"confirm": true}}}}),
        )
        .await;
    assert_eq!(r3.result()["content"][0]["text"], "from the form");
    // Without elicitation, a missing argument is the usual -32602 naming the field.
    let bare = mcp.with_capabilities(json!({})).tool("echo", json!({})).await;
    assert_eq!(bare.error_code(), Some(-32602));
    assert_eq!(bare.message()["error"]["data"]["field"], "text");
}

#[tokio::test]
async fn unknown_tool_policies_are_a_config_error() {
    let (status, stderr) =
        Server::start_failing(&format!("{FIXTURES_CONFIG}\n[tool_policies.ecko]\nconfirm = true\n"), &[]);
    assert!(!status.success());
    assert!(stderr.contains("tool_policies.ecko"), "{stderr}");
}
