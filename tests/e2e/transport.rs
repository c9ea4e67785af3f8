//! Every HTTP outcome of a request at the 2026-07-28 wire (MCP 2026-07-28,
//! basic/transports/streamable-http: status codes, the protocol-version and request-metadata
//! headers; basic: the request `_meta`; basic/versioning: unsupported versions; changelog:
//! removed methods) and the order in which the runtime checks an inbound POST (the spec gives
//! the individual rules, not an order), against the real binary: status, JSON-RPC code, id
//! echo, an actionable message, and the official schema for each error body.

use mcp_e2e::schema::{assert_response, assert_valid};
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

fn expect_error(a: &mcp_e2e::Answer, status: u16, code: i64, id: Option<&Value>) {
    assert_eq!(a.status, status, "status for {:?}", a.messages);
    assert_eq!(a.error_code(), Some(code), "code for {:?}", a.messages);
    assert_eq!(a.message().get("id"), id, "id echo");
    assert!(a.error_message().len() > 10, "message a person can act on: {:?}", a.error_message());
    assert_eq!(a.content_type(), "application/json");
}

fn server() -> (Server, Mcp) {
    let s = Server::start(FIXTURES_CONFIG);
    let m = s.mcp();
    (s, m)
}

#[tokio::test]
async fn handled_requests_answer_json_or_sse() {
    let (_s, mcp) = server();
    let a = mcp.call("tools/list", json!({})).await;
    assert_eq!((a.status, a.content_type()), (200, "application/json"));
    assert_response("tools/list", a.message());
    assert!(a.headers.get("mcp-session-id").is_none(), "no sessions");

    let a = mcp
        .call(
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    assert_eq!((a.status, a.content_type()), (200, "text/event-stream"));
    let progress = a.notifications();
    assert!(progress.len() >= 3, "{:?}", a.messages);
    for n in &progress {
        assert_valid("ProgressNotification", n);
        assert_eq!(n["params"]["progressToken"], "p1");
    }
    assert_response("tools/call", a.message());
    assert_eq!(a.headers.get("x-accel-buffering").unwrap(), "no");
}

#[tokio::test]
async fn progress_is_not_streamed_to_clients_that_only_accept_json() {
    let (_s, mcp) = server();
    let body = mcp
        .body("tools/call", json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}}));
    let a = mcp.send(&body, &[("accept", Some("application/json"))]).await;
    assert_eq!((a.status, a.content_type()), (200, "application/json"));
    assert_eq!(a.result()["content"][0]["text"], "Progress complete");
}

#[tokio::test]
async fn notifications_are_accepted_with_202() {
    let (_s, mcp) = server();
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let a = mcp.send(&body, &[]).await;
    assert_eq!(a.status, 202);
    assert!(a.raw.is_empty());
}

#[tokio::test]
async fn foreign_origin_and_host_are_forbidden() {
    let (s, mcp) = server();
    let body = mcp.body("server/discover", json!({}));
    let a = mcp.send(&body, &[("origin", Some("http://evil.example.com"))]).await;
    assert_eq!(a.status, 403);
    assert!(a.message().get("id").is_none());
    let a = mcp.send(&body, &[("host", Some("evil.example.com"))]).await;
    assert_eq!(a.status, 403);
    let ok = mcp.send(&body, &[("origin", Some(&format!("http://{}", s.addr)))]).await;
    assert_eq!(ok.status, 200);
    let ok = mcp.send(&body, &[("host", Some(&format!("localhost:{}", s.addr.port())))]).await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn other_http_methods_get_405_with_allow() {
    let (s, _) = server();
    let http = reqwest::Client::new();
    // GET is the 2025-era stream: it needs Accept: text/event-stream (406) and a session.
    let res = http.get(&s.url).header("accept", "application/json").send().await.unwrap();
    assert_eq!(res.status().as_u16(), 406);
    let res = http.get(&s.url).header("accept", "text/event-stream").send().await.unwrap();
    assert_eq!(res.status().as_u16(), 400, "no Mcp-Session-Id");
    for method in [reqwest::Method::DELETE, reqwest::Method::PUT] {
        let res = http.request(method.clone(), &s.url).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 405, "{method}");
        assert_eq!(res.headers().get("allow").unwrap(), "GET, POST");
    }
}

#[tokio::test]
async fn media_types_are_checked() {
    let (_s, mcp) = server();
    let body = mcp.body("tools/list", json!({}));
    let a = mcp.send(&body, &[("content-type", Some("text/plain"))]).await;
    assert_eq!(a.status, 415);
    let a = mcp.send(&body, &[("content-type", None)]).await;
    assert_eq!(a.status, 415);
    let a = mcp.send(&body, &[("accept", Some("text/html"))]).await;
    assert_eq!(a.status, 406);
    let listen = mcp.body("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let a = mcp.send(&listen, &[("accept", Some("application/json"))]).await;
    expect_error(&a, 406, -32600, Some(&listen["id"]));
    // charset parameters and missing Accept are fine
    let a = mcp.send(&body, &[("content-type", Some("application/json; charset=utf-8")), ("accept", None)]).await;
    assert_eq!(a.status, 200);
}

#[tokio::test]
async fn parse_and_shape_errors() {
    let (_s, mcp) = server();
    let h: Vec<(&str, &[u8])> =
        vec![("content-type", b"application/json"), ("accept", b"application/json, text/event-stream")];
    let a = mcp.post_raw(b"{\"jsonrpc\":".to_vec(), &h).await;
    expect_error(&a, 400, -32700, None);
    for (body, why) in [
        (json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]), "batch"),
        (json!([]), "empty batch"),
        (json!({"jsonrpc": "2.0", "id": 1, "result": {}}), "response object"),
        (json!("garbage"), "string"),
        (json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"}), "null id"),
        (json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}), "float id"),
    ] {
        let a = mcp.post_raw(serde_json::to_vec(&body).unwrap(), &h).await;
        assert_eq!((a.status, a.error_code()), (400, Some(-32600)), "{why}");
    }
    // A readable id is echoed even when the rest is wrong.
    let a = mcp.post_raw(br#"{"jsonrpc":"1.0","id":"x1","method":"tools/list"}"#.to_vec(), &h).await;
    expect_error(&a, 400, -32600, Some(&json!("x1")));
    let a = mcp.post_raw(br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":[1]}"#.to_vec(), &h).await;
    expect_error(&a, 400, -32600, Some(&json!(9)));
}

#[tokio::test]
async fn envelope_errors_name_what_is_missing() {
    let (_s, mcp) = server();
    let mut body = mcp.body("tools/list", json!({}));
    body["params"] = json!({});
    let a = mcp.send(&body, &[("mcp-protocol-version", Some("2026-07-28"))]).await;
    expect_error(&a, 400, -32602, Some(&body["id"]));
    assert_eq!(a.message()["error"]["data"]["missing"].as_array().unwrap().len(), 2);
    for key in ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"] {
        let mut body = mcp.body("tools/list", json!({}));
        body["params"]["_meta"].as_object_mut().unwrap().remove(key);
        let a = mcp.send(&body, &[("mcp-protocol-version", Some("2026-07-28"))]).await;
        expect_error(&a, 400, -32602, Some(&body["id"]));
        assert!(a.error_message().contains(key), "{}", a.error_message());
    }
    // clientInfo is optional.
    let mut body = mcp.body("server/discover", json!({}));
    body["params"]["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientInfo");
    assert_eq!(mcp.send(&body, &[]).await.status, 200);
    // Wrong types in _meta.
    for (key, bad) in [
        ("io.modelcontextprotocol/clientCapabilities", json!("all")),
        ("io.modelcontextprotocol/clientInfo", json!({"name": 1})),
        ("io.modelcontextprotocol/logLevel", json!("loud")),
        ("progressToken", json!({"a": 1})),
    ] {
        let mut body = mcp.body("tools/list", json!({}));
        body["params"]["_meta"][key] = bad;
        let a = mcp.send(&body, &[]).await;
        expect_error(&a, 400, -32602, Some(&body["id"]));
    }
}

#[tokio::test]
async fn header_mismatches_are_32020() {
    let (_s, mcp) = server();
    let list = mcp.body("tools/list", json!({}));
    let call = mcp.body("tools/call", json!({"name": "test_simple_text", "arguments": {}}));
    type Case<'a> = (&'a Value, Vec<(&'a str, Option<&'a str>)>, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (&list, vec![("mcp-protocol-version", None)], "MCP-Protocol-Version"),
        (&list, vec![("mcp-protocol-version", Some("2025-11-25"))], "MCP-Protocol-Version"),
        (&list, vec![("mcp-method", None)], "Mcp-Method"),
        (&list, vec![("mcp-method", Some("prompts/list"))], "Mcp-Method"),
        (&list, vec![("mcp-method", Some("TOOLS/LIST"))], "Mcp-Method"),
        (&call, vec![("mcp-name", None)], "Mcp-Name"),
        (&call, vec![("mcp-name", Some("test_image_content"))], "Mcp-Name"),
        (&call, vec![("mcp-name", Some("=?base64?not base64?="))], "Mcp-Name"),
    ];
    for (body, headers, named) in cases {
        let a = mcp.send(body, &headers).await;
        expect_error(&a, 400, -32020, Some(&body["id"]));
        assert!(a.error_message().contains(named), "{headers:?}: {}", a.error_message());
        assert_valid("HeaderMismatchError", a.message());
    }
    // Duplicate routing headers are refused.
    let mut h: Vec<(String, String)> = Mcp::headers_for(&call);
    h.push(("mcp-name".into(), "test_simple_text".into()));
    let pairs: Vec<(&str, &[u8])> = h.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
    let a = mcp.post_raw(serde_json::to_vec(&call).unwrap(), &pairs).await;
    expect_error(&a, 400, -32020, Some(&call["id"]));
    // Whitespace around values and the Base64 form are accepted.
    let a = mcp.send(&call, &[("mcp-name", Some("  test_simple_text \t"))]).await;
    assert_eq!(a.status, 200);
    let a = mcp.send(&call, &[("mcp-name", Some("=?base64?dGVzdF9zaW1wbGVfdGV4dA==?="))]).await;
    assert_eq!(a.status, 200);
}

#[tokio::test]
async fn mcp_param_headers_mirror_arguments() {
    let (_s, mcp) = server();
    let call = mcp.body("tools/call", json!({"name": "test_custom_header", "arguments": {"region": "eu-west"}}));
    let ok = mcp.send(&call, &[("mcp-param-region", Some("eu-west"))]).await;
    assert_eq!(ok.result()["content"][0]["text"], "region=eu-west");
    let b64 = mcp.send(&call, &[("Mcp-Param-Region", Some("=?base64?ZXUtd2VzdA==?="))]).await;
    assert_eq!(b64.status, 200);
    for bad in [None, Some("us-east"), Some("=?base64?ZXUtd2VzdA?=")] {
        let a = mcp.send(&call, &[("mcp-param-region", bad)]).await;
        expect_error(&a, 400, -32020, Some(&call["id"]));
    }
    // Header without the argument.
    let call = mcp.body("tools/call", json!({"name": "test_custom_header", "arguments": {}}));
    let a = mcp.send(&call, &[("mcp-param-region", Some("eu-west"))]).await;
    expect_error(&a, 400, -32020, Some(&call["id"]));
}

#[tokio::test]
async fn unsupported_versions_name_what_is_supported() {
    let (_s, mcp) = server();
    let mut body = mcp.body("tools/list", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let a = mcp.send(&body, &[]).await;
    expect_error(&a, 400, -32022, Some(&body["id"]));
    assert_eq!(a.message()["error"]["data"], json!({"supported": ["2026-07-28"], "requested": "2099-01-01"}));
    assert_valid("UnsupportedProtocolVersionError", a.message());
    // Header 2026-07-28 with body v999: a mismatch, not a version error (MCP 2026-07-28,
    // basic/transports/streamable-http, protocol version header; the conformance suite's
    // server-stateless scenario checks both cases).
    let mut body = mcp.body("server/discover", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let a = mcp.send(&body, &[("mcp-protocol-version", Some("2026-07-28"))]).await;
    expect_error(&a, 400, -32020, Some(&body["id"]));
    // A 2025-era initialize is served on the same endpoint (tests/e2e/legacy_clients.rs covers that leg).
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}});
    let a = mcp.send(&init, &[]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.result()["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404() {
    let (_s, mcp) = server();
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "no/such",
    ] {
        let body = mcp.body(method, json!({}));
        let a = mcp.send(&body, &[]).await;
        expect_error(&a, 404, -32601, Some(&body["id"]));
    }
}

#[tokio::test]
async fn missing_client_capability_is_32021_before_anything_runs() {
    let (_s, mcp) = server();
    let bare = mcp.with_capabilities(json!({}));
    let body = bare.body("tools/call", json!({"name": "test_missing_capability", "arguments": {}}));
    let a = bare.send(&body, &[]).await;
    expect_error(&a, 400, -32021, Some(&body["id"]));
    assert_eq!(a.message()["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}));
    assert_valid("MissingRequiredClientCapabilityError", a.message());
    // A tool that needs form elicitation for its input request: -32021 as well.
    let a = bare.tool("greet", json!({})).await;
    assert_eq!((a.status, a.error_code()), (400, Some(-32021)));
    assert_eq!(a.message()["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
}

#[tokio::test]
async fn handler_level_errors_are_32602_in_band() {
    let (_s, mcp) = server();
    let cases = [
        mcp.tool("no_such_tool", json!({})).await,
        mcp.tool("echo", json!({"text": 5})).await,
        mcp.tool("echo", json!({})).await,
        mcp.call("tools/call", json!({"name": "echo", "arguments": "text"})).await,
        mcp.call("prompts/get", json!({"name": "no_such_prompt"})).await,
        mcp.call("prompts/get", json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}})).await,
        mcp.call("resources/read", json!({"uri": "test://nope"})).await,
        mcp.call("tools/list", json!({"cursor": "bm90IGEgY3Vyc29y"})).await,
        mcp.call(
            "tools/call",
            json!({"name": "test_input_required_result_request_state", "arguments": {}, "requestState": "v1.k.AAAA"}),
        )
        .await,
    ];
    for a in &cases {
        assert_eq!((a.status, a.error_code()), (200, Some(-32602)), "{:?}", a.messages);
        assert!(a.message().get("id").is_some());
        assert_valid("JSONRPCErrorResponse", a.message());
    }
    assert_eq!(cases[1].message()["error"]["data"]["field"], "text");
    assert_eq!(cases[4].error_message(), "Unknown prompt: no_such_prompt", "nothing near it");
    assert_eq!(cases[6].message()["error"]["data"]["uri"], "test://nope");
    // A near miss names the prompt meant, in the message and in `data` (an agent's typo).
    let typo = mcp.call("prompts/get", json!({"name": "test_simple_promt"})).await;
    assert_eq!((typo.status, typo.error_code()), (200, Some(-32602)));
    assert_eq!(typo.error_message(), "Unknown prompt: test_simple_promt (did you mean 'test_simple_prompt'?)");
    assert_eq!(typo.message()["error"]["data"]["didYouMean"], "test_simple_prompt");
}

#[tokio::test]
async fn adapter_failures_do_not_leak_or_spread() {
    let (_s, mcp) = server();
    let a = mcp.tool("fail_internal", json!({})).await;
    assert_eq!((a.status, a.error_code()), (200, Some(-32603)));
    assert!(!a.raw.windows(6).any(|w| w == b"secret"), "internal detail leaked: {:?}", a.raw);
    let a = mcp.tool("panic", json!({})).await;
    assert_eq!(a.error_code(), Some(-32603));
    let a = mcp.tool("fail_backend", json!({})).await;
    assert_eq!(a.result()["isError"], true, "backend trouble is a tool error the model can read");
    let a = mcp.call("resources/read", json!({"uri": "faults://broken"})).await;
    assert_eq!(a.error_code(), Some(-32603));
    let a = mcp.tool("bad_output", json!({})).await;
    assert_eq!(
        a.result()["isError"],
        true,
        "structured content that breaks the output schema never reaches the client"
    );
    assert!(a.result()["content"][0]["text"].as_str().unwrap().contains("outputSchema"));
    // The server is still fine.
    assert_eq!(mcp.tool("echo", json!({"text": "still here"})).await.result()["content"][0]["text"], "still here");
}

#[tokio::test]
async fn calls_past_their_deadline_are_tool_errors() {
    let s = Server::start(&FIXTURES_CONFIG.replace("call_timeout_ms = 5000", "call_timeout_ms = 300"));
    let started = std::time::Instant::now();
    let a = s.mcp().tool("sleep", json!({"ms": 10_000})).await;
    assert_eq!(a.result()["isError"], true);
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
}

#[tokio::test]
async fn long_quiet_calls_switch_to_sse_with_keepalive_comments() {
    let s = Server::start(&FIXTURES_CONFIG.replace("page_size = 100", "page_size = 100\nsse_keepalive_ms = 200"));
    let mcp = s.mcp();
    let a = mcp.tool("sleep", json!({"ms": 700})).await;
    assert!(a.is_sse(), "a call longer than the keep-alive interval streams");
    assert!(a.raw.windows(12).filter(|w| w == b": keep-alive").count() >= 2, "{:?}", String::from_utf8_lossy(&a.raw));
    assert_eq!(a.result()["content"][0]["text"], "slept 700 ms");
    assert_response("tools/call", a.message());
    // Quick calls stay JSON; clients that only accept JSON always get JSON.
    assert_eq!(mcp.tool("sleep", json!({"ms": 10})).await.content_type(), "application/json");
    let body = mcp.body("tools/call", json!({"name": "sleep", "arguments": {"ms": 700}}));
    let a = mcp.send(&body, &[("accept", Some("application/json"))]).await;
    assert_eq!(
        (a.content_type(), a.result()["content"][0]["text"].as_str()),
        ("application/json", Some("slept 700 ms"))
    );
}
