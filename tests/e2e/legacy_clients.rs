//! 2025-era clients on the same endpoint: handshake and version negotiation, sealed sessions, 2025-11-25 shapes, server-to-client requests across replicas, the GET stream, hostile input.

use std::time::Duration;

use mcp_e2e::client::{Answer, Stream};
use mcp_e2e::redis::RedisServer;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

const KEY: &str = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=";

/// A 2025-era client: `initialize`, then `Mcp-Session-Id` and `MCP-Protocol-Version` on every POST.
struct Legacy {
    mcp: Mcp,
    url: String,
    session: String,
    version: String,
}

async fn initialize(url: &str, version: &str, capabilities: Value) -> (Legacy, Answer) {
    let mcp = Mcp::new(url);
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "old", "version": "1.0"}}});
    let a = mcp.post_raw(body.to_string().into_bytes(), &base()).await;
    assert_eq!(a.status, 200, "{:?}", a.messages);
    let session = a.headers.get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
    let version = a.result()["protocolVersion"].as_str().unwrap().to_owned();
    (Legacy { mcp, url: url.to_owned(), session, version }, a)
}

fn base() -> Vec<(&'static str, &'static [u8])> {
    vec![("content-type", b"application/json"), ("accept", b"application/json, text/event-stream")]
}

impl Legacy {
    async fn post(&self, body: &Value) -> Answer {
        self.post_as(body, Some(&self.session)).await
    }

    async fn post_as(&self, body: &Value, session: Option<&str>) -> Answer {
        let mut h = base();
        if let Some(s) = session {
            h.push(("mcp-session-id", s.as_bytes()));
        }
        h.push(("mcp-protocol-version", self.version.as_bytes()));
        self.mcp.post_raw(body.to_string().into_bytes(), &h).await
    }

    async fn request(&self, method: &str, params: Value) -> Answer {
        self.post(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})).await
    }

    /// POSTs `body` and returns the SSE response as it streams.
    async fn stream(&self, body: &Value, accept: &str) -> (u16, Stream) {
        let mut req = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", accept)
            .header("mcp-session-id", &self.session)
            .header("mcp-protocol-version", &self.version)
            .body(body.to_string());
        if body.is_null() {
            req = reqwest::Client::new()
                .get(&self.url)
                .header("accept", accept)
                .header("mcp-session-id", &self.session)
                .header("mcp-protocol-version", &self.version);
        }
        let stream = Stream::new(req.send().await.unwrap(), body["id"].clone());
        (stream.status, stream)
    }
}

fn no_modern_fields(result: &Value) {
    for f in ["resultType", "ttlMs", "cacheScope"] {
        assert!(result.get(f).is_none(), "{f} in a 2025-era result: {result}");
    }
}

#[tokio::test]
async fn handshake_negotiates_versions_and_serves_the_session() {
    let s = Server::start(FIXTURES_CONFIG);
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("not-a-version", "2025-11-25"),
    ] {
        let (c, a) = initialize(&s.url, asked, json!({})).await;
        assert_eq!(c.version, answered, "initialize asking {asked}");
        assert!(c.session.bytes().all(|b| (0x21..=0x7e).contains(&b)), "visible ASCII session id");
        let r = a.result();
        no_modern_fields(r);
        assert!(r["capabilities"]["tools"].is_object() && r["capabilities"].get("extensions").is_none(), "{r}");
        assert!(r["serverInfo"]["name"].is_string());
    }
    let (c, _) = initialize(&s.url, "2025-11-25", json!({})).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(c.post(&note).await.status, 202);
    let ping = c.request("ping", json!({})).await;
    assert_eq!(ping.result(), &json!({}));
    let tools = c.request("tools/list", json!({})).await;
    assert_eq!(tools.status, 200);
    no_modern_fields(tools.result());
    assert!(tools.result()["tools"].as_array().is_some_and(|t| !t.is_empty()));
    // No MCP-Protocol-Version header: taken as 2025-03-26 and served.
    let mut h = base();
    h.push(("mcp-session-id", c.session.as_bytes()));
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string().into_bytes();
    assert_eq!(c.mcp.post_raw(body.clone(), &h).await.status, 200);
    h.push(("mcp-protocol-version", b"2099-01-01"));
    assert_eq!(c.mcp.post_raw(body, &h).await.status, 400, "an unsupported version header");
    // Modern-only methods stay modern; server/discover keeps listing modern versions only.
    assert_eq!(c.request("server/discover", json!({})).await.error_code(), Some(-32601));
    let discover = s.mcp().call("server/discover", json!({})).await;
    assert_eq!(discover.result()["supportedVersions"], json!(["2026-07-28"]));
    // A _meta claim is modern even on initialize, and a malformed envelope behind it a modern error.
    let claim = s.mcp().call("initialize", json!({})).await;
    assert_eq!(claim.error_code(), Some(-32601));
    let mut bad = s.mcp().body("tools/list", json!({}));
    bad["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!([]);
    assert_eq!(s.mcp().send(&bad, &[]).await.error_code(), Some(-32602));
}

#[tokio::test]
async fn results_have_2025_shapes() {
    let s = Server::start(FIXTURES_CONFIG);
    let (c, _) = initialize(&s.url, "2025-11-25", json!({})).await;
    let echo = c.request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})).await;
    no_modern_fields(echo.result());
    assert_eq!(echo.result()["content"][0]["text"], "hi");
    let read = c.request("resources/read", json!({"uri": "test://static-text"})).await;
    no_modern_fields(read.result());
    let missing = c.request("resources/read", json!({"uri": "test://nope"})).await;
    assert_eq!((missing.status, missing.error_code()), (200, Some(-32002)), "{:?}", missing.messages);
    let prompt = c.request("prompts/get", json!({"name": "test_simple_prompt"})).await;
    no_modern_fields(prompt.result());
    assert_eq!(c.request("logging/setLevel", json!({"level": "debug"})).await.result(), &json!({}));
    assert_eq!(c.request("logging/setLevel", json!({"level": "loud"})).await.error_code(), Some(-32602));
    let sub = c.request("resources/subscribe", json!({"uri": "test://watched-resource"})).await;
    assert_eq!(sub.result(), &json!({}));
    // Progress on the POST's SSE stream.
    let progress = c
        .request(
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert!(progress.is_sse() && progress.notifications().len() >= 3, "{:?}", progress.messages);
    no_modern_fields(progress.result());
}

#[tokio::test]
async fn a_client_without_the_capability_gets_a_tool_error() {
    let s = Server::start(FIXTURES_CONFIG);
    let (c, _) = initialize(&s.url, "2025-11-25", json!({})).await;
    for (tool, needs) in [("test_elicitation", "elicitation"), ("test_sampling", "sampling")] {
        let a = c.request("tools/call", json!({"name": tool, "arguments": {"message": "m", "prompt": "p"}})).await;
        assert_eq!(a.status, 200);
        assert_eq!(a.result()["isError"], true, "{:?}", a.messages);
        let text = a.result()["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(needs), "{text}");
    }
}

#[tokio::test]
async fn elicitation_is_answered_on_another_replica_through_redis() {
    let redis = RedisServer::start().await;
    let config = format!(
        "{FIXTURES_CONFIG}\n[redis]\nurl = \"{}\"\n[[request_state.keys]]\nid = \"k1\"\nsecret = \"{KEY}\"\n",
        redis.url
    );
    let (a, b) = (Server::start(&config), Server::start(&config));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (on_a, _) = initialize(&a.url, "2025-11-25", json!({"elicitation": {}, "sampling": {}})).await;
    let on_b = Legacy {
        mcp: Mcp::new(&b.url),
        url: b.url.clone(),
        session: on_a.session.clone(),
        version: on_a.version.clone(),
    };
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "Who are you?"}}});
    let (status, mut events) = on_a.stream(&call, "application/json, text/event-stream").await;
    assert_eq!(status, 200);
    let ask = events.until("elicitation/create", Duration::from_secs(5)).await.expect("an elicitation/create request");
    assert_eq!(ask["params"]["message"], "Who are you?");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"username": "u", "email": "e"}}});
    // The session works on B (no lookup), and B routes the answer to A.
    assert_eq!(on_b.request("ping", json!({})).await.status, 200);
    assert_eq!(on_b.post(&answer).await.status, 202);
    let done = events.next(Duration::from_secs(5)).await.expect("the tool result");
    assert_eq!(done["id"], 11);
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("User response: action=accept"), "{done}");
    no_modern_fields(&done["result"]);
    // The same answer again, and answers to ids nobody asked: 202, nothing changes.
    assert_eq!(on_b.post(&answer).await.status, 202);
    assert_eq!(on_a.post(&answer).await.status, 202);
    let stray = json!({"jsonrpc": "2.0", "id": "rt.nobody.1", "result": {}});
    assert_eq!(on_a.post(&stray).await.status, 202);
    // Sampling the same way, answered on A itself.
    let call = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call",
        "params": {"name": "test_sampling", "arguments": {"prompt": "2+2?"}}});
    let (_, mut events) = on_b.stream(&call, "application/json, text/event-stream").await;
    let ask = events.until("sampling/createMessage", Duration::from_secs(5)).await.expect("sampling");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}});
    assert_eq!(on_a.post(&answer).await.status, 202);
    let done = events.next(Duration::from_secs(5)).await.expect("the tool result");
    assert_eq!(done["result"]["content"][0]["text"], "LLM response: 4");
    // What the session sets on one replica holds on the others: the log level and subscriptions.
    let logged = |a: &Answer| a.notifications().iter().filter(|n| n["method"] == "notifications/message").count();
    let call = json!({"name": "test_tool_with_logging", "arguments": {}});
    assert!(logged(&on_a.request("tools/call", call.clone()).await) >= 3, "info and above by default");
    assert_eq!(on_b.request("logging/setLevel", json!({"level": "error"})).await.result(), &json!({}));
    assert_eq!(logged(&on_a.request("tools/call", call).await), 0, "the level set on B filters on A");
    let (_, mut stream) = on_a.stream(&Value::Null, "text/event-stream").await;
    on_b.request("resources/subscribe", json!({"uri": "test://watched-resource"})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    on_b.request("tools/call", json!({"name": "touch_resource", "arguments": {"uri": "test://watched-resource"}}))
        .await;
    let updated = stream.until("notifications/resources/updated", Duration::from_secs(5)).await;
    assert!(updated.is_some(), "subscribed on B, changed on B, streamed on A");
}

#[tokio::test]
async fn without_redis_an_answer_on_another_replica_ends_in_a_tool_error_not_a_hang() {
    let config = format!(
        "{}\n[[request_state.keys]]\nid = \"k1\"\nsecret = \"{KEY}\"\n",
        FIXTURES_CONFIG.replace("call_timeout_ms = 5000", "call_timeout_ms = 1500")
    );
    let (a, b) = (Server::start(&config), Server::start(&config));
    let (on_a, _) = initialize(&a.url, "2025-11-25", json!({"elicitation": {}})).await;
    let on_b = Legacy {
        mcp: Mcp::new(&b.url),
        url: b.url.clone(),
        session: on_a.session.clone(),
        version: on_a.version.clone(),
    };
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "m"}}});
    let (_, mut events) = on_a.stream(&call, "application/json, text/event-stream").await;
    let ask = events.until("elicitation/create", Duration::from_secs(5)).await.expect("elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "cancel"}});
    assert_eq!(on_b.post(&answer).await.status, 202);
    let done = events.next(Duration::from_secs(5)).await.expect("a result, not a hang");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("[redis]"), "{done}");
}

#[tokio::test]
async fn the_get_stream_delivers_list_changes_and_subscribed_updates() {
    let s = Server::start(FIXTURES_CONFIG);
    let (c, _) = initialize(&s.url, "2025-11-25", json!({})).await;
    let (status, _) = c.stream(&Value::Null, "application/json").await;
    assert_eq!(status, 406, "GET without Accept: text/event-stream");
    let (status, mut events) = c.stream(&Value::Null, "text/event-stream").await;
    assert_eq!(status, 200);
    c.request("resources/subscribe", json!({"uri": "test://watched-resource"})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.request("tools/call", json!({"name": "touch_resource", "arguments": {"uri": "test://other"}})).await;
    c.request("tools/call", json!({"name": "touch_resource", "arguments": {"uri": "test://watched-resource"}})).await;
    c.request("tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}})).await;
    let first = events.next(Duration::from_secs(5)).await.expect("an update");
    assert_eq!(first["method"], "notifications/resources/updated", "only the subscribed URI: {first}");
    assert_eq!(first["params"]["uri"], "test://watched-resource");
    let changed = events.until("notifications/tools/list_changed", Duration::from_secs(5)).await;
    assert!(changed.is_some());
}

#[tokio::test]
async fn hostile_legacy_input_is_refused_clearly() {
    let s = Server::start(FIXTURES_CONFIG);
    let (c, _) = initialize(&s.url, "2025-11-25", json!({})).await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(c.post_as(&ping, None).await.status, 400, "no session id");
    assert_eq!(
        c.post_as(&ping, Some("s1.k1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).await.status,
        404,
        "forged"
    );
    let mut tampered = c.session.clone().into_bytes();
    let i = tampered.len() - 5;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    assert_eq!(c.post_as(&ping, Some(std::str::from_utf8(&tampered).unwrap())).await.status, 404, "tampered");
    // A requestState is never a session.
    let modern = s.mcp().tool("test_input_required_result_request_state", json!({})).await;
    let state = modern.result()["requestState"].as_str().unwrap().to_owned();
    assert_eq!(c.post_as(&ping, Some(&state)).await.status, 404, "a requestState as a session");
    let answer = json!({"jsonrpc": "2.0", "id": "rt.x.y", "result": {}});
    assert_eq!(c.post_as(&answer, None).await.status, 400, "an answer without a session");
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "x".repeat(10_000), "version": "1"}}});
    let a = c.mcp.post_raw(huge.to_string().into_bytes(), &base()).await;
    assert_eq!(a.status, 400, "huge clientInfo");
    assert!(a.headers.get("mcp-session-id").is_none());
    let res = reqwest::Client::new().delete(&s.url).header("mcp-session-id", &c.session).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 405, "sessions end by expiring");
    assert_eq!(c.post(&ping).await.status, 200, "the session still works");
}
