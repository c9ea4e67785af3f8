//! Tool search (`[discovery] mode = "search"`) as an agent uses it: `tools/list` shows the
//! three search tools; `search_tools` finds a catalog tool from a description in other
//! words; `describe_tools` gives its definition; `call_tool` runs it with everything a direct
//! call gets (argument checks, access rules, MRTR rounds, the call record naming the inner
//! tool), for 2026-07-28 and 2025-era clients alike; bad input is refused with words that say
//! what to send.

use std::time::Duration;

use mcp_e2e::wait::until;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

const TOKEN: &str = "search-token-of-ada-0123456789";

fn config(extra: &str) -> String {
    format!(
        "{FIXTURES_CONFIG}\n[discovery]\nmode = \"search\"\n\n[auth]\n[[auth.tokens]]\nsubject = \"ada\"\nsecret = \"{TOKEN}\"\n\
         \n[[adapters]]\nname = \"clock\"\nkind = \"fixtures\"\nset = \"clock\"\n\n[auth.tools.utc_now]\nscopes = [\"admin\"]\n{extra}"
    )
}

fn names(tools: &Value) -> Vec<&str> {
    tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

async fn search(mcp: &Mcp, query: &str) -> Vec<String> {
    let a = mcp.tool("search_tools", json!({"query": query, "limit": 5})).await;
    names(&a.result()["structuredContent"]["tools"]).into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn an_agent_finds_describes_and_calls_a_tool_it_was_never_listed() {
    let server = Server::start_with(&config(""), &[("RUST_LOG", "info")]);
    let mcp = server.mcp().with_header("authorization", &format!("Bearer {TOKEN}"));

    let list = mcp.call("tools/list", json!({})).await;
    assert_eq!(names(&list.result()["tools"]), ["search_tools", "describe_tools", "call_tool"]);
    let description = list.result()["tools"][0]["description"].as_str().unwrap();
    assert!(description.contains("among the"), "{description}");

    // Other words than the tool's: "sum" and "numbers" for `add` ("Add two numbers").
    let found = search(&mcp, "sum of two numbers").await;
    assert_eq!(found.first().map(String::as_str), Some("add"), "{found:?}");
    let found = search(&mcp, "send the given text back").await;
    assert_eq!(found.first().map(String::as_str), Some("echo"), "{found:?}");
    // A tool the caller may not use is never found nor described.
    assert!(!search(&mcp, "current UTC time now").await.contains(&"utc_now".to_owned()));

    let described = mcp.tool("describe_tools", json!({"names": ["add", "utc_now", "no_such_tool"]})).await;
    let body = &described.result()["structuredContent"];
    assert_eq!(names(&body["tools"]), ["add"]);
    assert_eq!(body["tools"][0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(body["unknown"], json!(["utc_now", "no_such_tool"]));

    // call_tool's result is the tool's own, as a direct call gives it.
    let through = mcp.tool("call_tool", json!({"name": "add", "arguments": {"a": 2, "b": 40}})).await;
    let direct = mcp.tool("add", json!({"a": 2, "b": 40})).await;
    assert_eq!(through.result()["structuredContent"]["sum"], 42);
    assert_eq!(through.result()["structuredContent"], direct.result()["structuredContent"]);
    // Its arguments are checked against the inner tool's schema, and its access rule holds.
    let bad = mcp.tool("call_tool", json!({"name": "add", "arguments": {"a": "two"}})).await;
    assert_eq!(bad.error_code(), Some(-32602));
    assert!(bad.error_message().contains("tool 'add'"), "{}", bad.error_message());
    let denied = mcp.tool("call_tool", json!({"name": "utc_now", "arguments": {}})).await;
    assert_eq!(denied.status, 403, "{:?}", denied.messages);
    assert!(denied.error_message().contains("tools/call utc_now"), "{}", denied.error_message());

    // The call record names the tool that ran, not the wrapper: three calls of `add` (through
    // call_tool, direct, refused arguments through call_tool), the refused `utc_now`, none of
    // call_tool.
    let line = server.log_line("name=\"add\" caller").await;
    assert!(line.contains("outcome=\"ok\"") && line.contains("adapter=\"demo\""), "{line}");
    // The records are written off the request path, in batches: wait for the last of them.
    let counts = || {
        let log = server.stderr();
        let calls = |name: &str| log.lines().filter(|l| l.contains(&format!("name=\"{name}\" caller"))).count();
        (calls("add"), calls("utc_now"), calls("call_tool"))
    };
    let lines = || {
        let log = server.stderr();
        let lines: Vec<&str> = log.lines().filter(|l| l.contains("mcp_runtime::call")).collect();
        format!("{:?}, not (3, 1, 0), call lines of add, utc_now and call_tool:\n{lines:#?}", counts())
    };
    until(Duration::from_secs(10), lines, || counts() == (3, 1, 0)).await;
}

#[tokio::test]
async fn a_question_asked_through_call_tool_is_answered_through_call_tool() {
    let server = Server::start(&config("\n[tool_policies.echo]\nconfirm = true\n"));
    let mcp = server.mcp().with_header("authorization", &format!("Bearer {TOKEN}"));
    let wrapped = json!({"name": "echo", "arguments": {"text": "deploy"}});
    let r1 = mcp.tool("call_tool", wrapped.clone()).await;
    let result = r1.result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let key = result["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let state = result["requestState"].as_str().unwrap();
    let retry = |inner: Value| {
        json!({"name": "call_tool", "arguments": inner, "requestState": state,
               "inputResponses": {key.as_str(): {"action": "accept", "content": {"confirm": true}}}})
    };
    let r2 = mcp.call("tools/call", retry(wrapped)).await;
    assert_eq!(r2.result()["content"][0]["text"], "deploy");
    // The sealed state is bound to the inner tool and its arguments.
    let other = mcp.call("tools/call", retry(json!({"name": "echo", "arguments": {"text": "rm -rf /"}}))).await;
    assert_eq!(other.error_code(), Some(-32602), "{:?}", other.messages);
}

#[tokio::test]
async fn a_2025_era_client_calls_through_call_tool_too() {
    let server = Server::start(&config(""));
    let mcp = Mcp::new(&server.url);
    let headers = |session: Option<&str>| {
        let mut h: Vec<(&str, Vec<u8>)> = vec![
            ("content-type", b"application/json".to_vec()),
            ("accept", b"application/json, text/event-stream".to_vec()),
            ("authorization", format!("Bearer {TOKEN}").into_bytes()),
        ];
        if let Some(s) = session {
            h.push(("mcp-session-id", s.as_bytes().to_vec()));
            h.push(("mcp-protocol-version", b"2025-11-25".to_vec()));
        }
        h
    };
    let post = |body: Value, session: Option<String>| {
        let mcp = &mcp;
        async move {
            let h = headers(session.as_deref());
            let h: Vec<(&str, &[u8])> = h.iter().map(|(k, v)| (*k, v.as_slice())).collect();
            mcp.post_raw(body.to_string().into_bytes(), &h).await
        }
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
               "capabilities": {}, "clientInfo": {"name": "old", "version": "1.0"}}}),
        None,
    )
    .await;
    let session = init.headers.get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
    let list =
        post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}), Some(session.clone())).await;
    assert_eq!(names(&list.result()["tools"]), ["search_tools", "describe_tools", "call_tool"]);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "call_tool", "arguments": {"name": "echo", "arguments": {"text": "from 2025"}}}});
    let a = post(call, Some(session.clone())).await;
    assert_eq!(a.result()["content"][0]["text"], "from 2025", "{:?}", a.messages);
    let denied = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "call_tool", "arguments": {"name": "utc_now"}}});
    assert_eq!(post(denied, Some(session)).await.status, 403);
}

#[tokio::test]
async fn bad_search_calls_and_configs_say_what_to_send() {
    let server = Server::start(&config(""));
    let mcp = server.mcp().with_header("authorization", &format!("Bearer {TOKEN}"));
    for (tool, args, words) in [
        ("search_tools", json!({}), "search_tools needs arguments.query"),
        ("search_tools", json!({"query": "x", "limit": 500}), "limit must be an integer from 1 to 50"),
        ("describe_tools", json!({"names": []}), "describe_tools needs arguments.names"),
        ("call_tool", json!({"arguments": {}}), "call_tool needs arguments.name"),
        ("call_tool", json!({"name": "call_tool"}), "runs catalog tools, not 'call_tool'"),
        ("call_tool", json!({"name": "echo", "arguments": "text"}), "arguments.arguments to be an object"),
        ("call_tool", json!({"name": "nope"}), "Unknown tool: nope"),
    ] {
        let a = mcp.tool(tool, args.clone()).await;
        assert_eq!(a.error_code(), Some(-32602), "{tool} {args}");
        assert!(a.error_message().contains(words), "{tool} {args}: {}", a.error_message());
    }
    drop(server);

    let (status, stderr) = Server::start_failing("[discovery]\nmode = \"find\"\n", &[]);
    assert!(!status.success());
    assert!(stderr.contains("discovery.mode") && stderr.contains("use \"list\""), "{stderr}");
    assert!(stderr.contains(":2:"), "the line of the key: {stderr}");
}
