//! Virtual endpoints (`[[endpoints]]`) as their clients see them: each path is its own MCP
//! server (server info, instructions, listings of its selection, tools renamed and with
//! arguments fixed), access rules follow a renamed tool, and what one endpoint hands out (a
//! 2025-era session, an MRTR `requestState`, a task id) is refused on another; a reload that
//! changes one endpoint's lists notifies that endpoint's listeners only; a configuration
//! mistake is named at its place in the file.

use std::time::Duration;

use mcp_e2e::client::Answer;
use mcp_e2e::{FIXTURES_CONFIG, Mcp, Server};
use serde_json::{Value, json};

const TOKEN: &str = "endpoints-token-of-ada-0123456789";

const ENDPOINTS: &str = r#"
[[endpoints]]
path = "/mcp/math"
title = "Arithmetic"
instructions = "Adds one to numbers and greets people."
adapters = ["demo"]
include = ["add", "echo", "greet"]

[endpoints.tools.add]
name = "increment"
description = "Add one to a number."
arguments = { b = 1 }

[[endpoints]]
path = "/mcp/read-only"
adapters = ["demo"]
annotations = { readOnlyHint = true }

[[endpoints]]
path = "/mcp/all"
"#;

fn config(endpoints: &str) -> String {
    format!(
        "{FIXTURES_CONFIG}\n[auth]\n[[auth.tokens]]\nsubject = \"ada\"\nsecret = \"{TOKEN}\"\n\n\
         [auth.tools.utc_now]\nscopes = [\"admin\"]\n\n[[adapters]]\nname = \"clock\"\nkind = \"fixtures\"\nset = \"clock\"\n\n\
         [request_state]\n[[request_state.keys]]\nid = \"k1\"\nsecret = \"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\"\n{endpoints}"
    )
}

fn at(server: &Server, path: &str) -> Mcp {
    let base = server.url.trim_end_matches("/mcp");
    Mcp::new(&format!("{base}{path}")).with_header("authorization", &format!("Bearer {TOKEN}"))
}

fn names(a: &Answer) -> Vec<String> {
    a.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn each_endpoint_is_a_server_of_its_own_selection() {
    let server = Server::start_with(&config(ENDPOINTS), &[("RUST_LOG", "info")]);
    let math = at(&server, "/mcp/math");

    let discover = math.call("server/discover", json!({})).await;
    let d = discover.result();
    let info = &d["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["name"], "mcp-e2e-math", "{d}");
    assert_eq!(info["title"], "Arithmetic");
    assert_eq!(d["instructions"], "Adds one to numbers and greets people.");
    assert!(d["capabilities"]["resources"].is_null(), "the readme is not selected: {d}");

    let list = math.call("tools/list", json!({})).await;
    assert_eq!(names(&list), ["echo", "increment", "greet"]);
    let increment = &list.result()["tools"][1];
    assert_eq!(increment["description"], "Add one to a number.");
    assert_eq!(increment["inputSchema"]["properties"], json!({"a": {"type": "number"}}), "{increment}");
    assert_eq!(increment["inputSchema"]["required"], json!(["a"]));

    // The renamed tool runs the catalog's `add` with the fixed argument.
    let one_more = math.tool("increment", json!({"a": 41})).await;
    assert_eq!(one_more.result()["structuredContent"]["sum"], 42, "{:?}", one_more.messages);
    let sneaky = math.tool("increment", json!({"a": 1, "b": 100})).await;
    assert_eq!(sneaky.error_code(), Some(-32602));
    assert!(sneaky.error_message().contains("argument 'b' is fixed on this endpoint"), "{}", sneaky.error_message());
    // Names it does not serve are unknown there, whatever other endpoints serve.
    for name in ["add", "utc_now", "test_simple_text"] {
        let a = math.tool(name, json!({"a": 1, "b": 2})).await;
        assert_eq!(a.error_code(), Some(-32602), "{name}: {:?}", a.messages);
        assert!(a.error_message().contains(&format!("Unknown tool: {name}")), "{}", a.error_message());
    }
    // The call record names the tool as the catalog does, and the endpoint it came to.
    let line = server.log_line("name=\"add\" endpoint=\"/mcp/math\"").await;
    assert!(line.contains("outcome=\"ok\"") && line.contains("adapter=\"demo\""), "{line}");
    let unknown = server.log_line("name=\"utc_now\" endpoint=\"/mcp/math\"").await;
    assert!(!unknown.contains("adapter="), "a tool the endpoint does not serve has no adapter there: {unknown}");

    let read_only = at(&server, "/mcp/read-only");
    assert_eq!(names(&read_only.call("tools/list", json!({})).await), ["echo", "add"]);
    let prompts = read_only.call("prompts/list", json!({})).await;
    assert_eq!(prompts.result()["prompts"][0]["name"], "hello_prompt");

    // `server.path` serves everything as before, `add` with both arguments.
    let main = at(&server, "/mcp");
    let all = main.call("tools/list", json!({})).await;
    let add = all.result()["tools"].as_array().unwrap().iter().find(|t| t["name"] == "add").unwrap().clone();
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    let discover = main.call("server/discover", json!({})).await;
    assert_eq!(discover.result()["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcp-e2e");

    // A path that is not an endpoint is not an MCP server.
    let nowhere = at(&server, "/mcp/nowhere").call("tools/list", json!({})).await;
    assert_eq!(nowhere.status, 404);
}

#[tokio::test]
async fn an_access_rule_follows_a_tool_renamed_by_an_endpoint() {
    let renamed = "\n[[endpoints]]\npath = \"/mcp/time\"\n\n[endpoints.tools.utc_now]\nname = \"what_time_is_it\"\n";
    let server = Server::start(&config(renamed));
    let time = at(&server, "/mcp/time");
    let denied = time.tool("what_time_is_it", json!({})).await;
    assert_eq!(denied.status, 403, "{:?}", denied.messages);
    assert!(
        denied.error_message().contains("tools/call what_time_is_it needs the scopes admin"),
        "{}",
        denied.error_message()
    );
    // The same from the routing headers alone (refused before the body is read).
    let body = time.body("tools/call", json!({"name": "what_time_is_it", "arguments": {}}));
    let early = time.send(&body, &[]).await;
    assert_eq!(early.status, 403);
    // Nor is it listed to this caller, under either name, nor offered for a near miss.
    let listed = names(&time.call("tools/list", json!({})).await);
    assert!(listed.contains(&"echo".to_owned()) && !listed.contains(&"what_time_is_it".to_owned()), "{listed:?}");
    let main = at(&server, "/mcp");
    assert!(!names(&main.call("tools/list", json!({})).await).contains(&"utc_now".to_owned()));
    let near = time.tool("what_time_is_itt", json!({})).await;
    assert_eq!(near.error_message(), "Unknown tool: what_time_is_itt", "{:?}", near.messages);
    // A tool the caller may call is offered for its near miss (an agent's typo).
    let typo = time.tool("ecoh", json!({"text": "hi"})).await;
    assert_eq!(typo.error_code(), Some(-32602));
    assert_eq!(typo.error_message(), "Unknown tool: ecoh (did you mean 'echo'?)", "{:?}", typo.messages);
    assert_eq!(typo.messages[0]["error"]["data"]["didYouMean"], "echo", "{:?}", typo.messages);
}

#[tokio::test]
async fn what_one_endpoint_hands_out_is_refused_on_another() {
    let server = Server::start(&config(ENDPOINTS));
    let asks = |mcp: Mcp| mcp.with_capabilities(json!({"elicitation": {"form": {}}}));
    let (math, all, main) = (asks(at(&server, "/mcp/math")), asks(at(&server, "/mcp/all")), asks(at(&server, "/mcp")));

    // An MRTR round: greet asks for a name; its requestState opens only where it was minted.
    let first = math.tool("greet", json!({})).await;
    let r = first.result();
    assert_eq!(r["resultType"], "input_required", "{r}");
    let (key, state) =
        (r["inputRequests"].as_object().unwrap().keys().next().unwrap().clone(), r["requestState"].clone());
    let retry = json!({"name": "greet", "arguments": {},
        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}, "requestState": state});
    for elsewhere in [&all, &main] {
        let a = elsewhere.call("tools/call", retry.clone()).await;
        assert_eq!(a.error_code(), Some(-32602), "{:?}", a.messages);
        assert!(a.error_message().contains("another endpoint"), "{}", a.error_message());
    }
    let answered = math.call("tools/call", retry).await;
    assert!(answered.text(0).contains("Ada"), "{:?}", answered.messages);

    // A task id is the task of the endpoint that created it.
    let tasks = |m: &Mcp| m.with_capabilities(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let created = tasks(&all).tool("slow_compute", json!({"seconds": 5})).await;
    let id = created.result()["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(tasks(&all).call("tasks/get", json!({"taskId": id})).await.result()["status"], "working");
    let there = tasks(&main).call("tasks/get", json!({"taskId": id})).await;
    assert!(there.error_code().is_some(), "a task of /mcp/all read on /mcp: {:?}", there.messages);

    // A 2025-era session opened on one endpoint is not a session on another (404: initialize again).
    let bearer = format!("Bearer {TOKEN}");
    let legacy = |url: &str, session: Option<&str>, body: Value| {
        let mcp = Mcp::new(url);
        let session = session.map(str::to_owned);
        let bearer = bearer.clone();
        async move {
            let mut h: Vec<(&str, &[u8])> = vec![
                ("content-type", b"application/json"),
                ("accept", b"application/json, text/event-stream"),
                ("authorization", bearer.as_bytes()),
            ];
            if let Some(s) = &session {
                h.push(("mcp-session-id", s.as_bytes()));
                h.push(("mcp-protocol-version", b"2025-11-25"));
            }
            mcp.post_raw(body.to_string().into_bytes(), &h).await
        }
    };
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1.0"}}});
    let opened = legacy(&format!("{base}/mcp/math"), None, init).await;
    assert_eq!(opened.result()["serverInfo"]["name"], "mcp-e2e-math", "{:?}", opened.messages);
    let session = opened.headers.get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let here = legacy(&format!("{base}/mcp/math"), Some(&session), list.clone()).await;
    assert_eq!(names(&here), ["echo", "increment", "greet"]);
    for path in ["/mcp/all", "/mcp"] {
        let a = legacy(&format!("{base}{path}"), Some(&session), list.clone()).await;
        assert_eq!(a.status, 404, "{path}: {:?}", a.messages);
    }
}

#[tokio::test]
async fn a_reload_notifies_only_the_listeners_of_the_endpoints_it_changed() {
    let server = Server::start_with(&config(ENDPOINTS), &[("RUST_LOG", "info")]);
    let filter = json!({"notifications": {"toolsListChanged": true}});
    let mut streams = Vec::new();
    for path in ["/mcp/math", "/mcp/read-only", "/mcp"] {
        let mut s = at(&server, path).open_stream("subscriptions/listen", filter.clone()).await;
        assert!(s.until("notifications/subscriptions/acknowledged", Duration::from_secs(5)).await.is_some());
        streams.push((path, s));
    }
    // /mcp/math no longer serves echo; nothing else changes.
    let changed = config(&ENDPOINTS.replace(r#"include = ["add", "echo", "greet"]"#, r#"include = ["add", "greet"]"#));
    std::fs::write(&server.config_path, changed).unwrap();
    server.signal("HUP");
    server.log_line("configuration reloaded").await;
    for (path, s) in &mut streams {
        let heard = s.until("notifications/tools/list_changed", Duration::from_secs(2)).await;
        assert_eq!(heard.is_some(), *path == "/mcp/math", "{path}: {heard:?}");
    }
    assert_eq!(names(&at(&server, "/mcp/math").call("tools/list", json!({})).await), ["increment", "greet"]);
}

/// One endpoint finds its tools by search (`discovery = "search"`) over its own selection,
/// while `/mcp` and the other endpoints list theirs; `check` says which.
#[tokio::test]
async fn an_endpoint_may_find_its_tools_by_search() {
    let endpoints = r#"
[[endpoints]]
path = "/mcp/find"
adapters = ["demo"]
exclude = ["echo"]
discovery = "search"

[endpoints.tools.add]
name = "sum_numbers"
"#;
    let server = Server::start_with(&config(&format!("{endpoints}{ENDPOINTS}")), &[]);
    let find = at(&server, "/mcp/find");
    assert_eq!(names(&find.call("tools/list", json!({})).await), ["search_tools", "describe_tools", "call_tool"]);
    let found = find.tool("search_tools", json!({"query": "add two numbers together", "limit": 50})).await;
    let hits: Vec<&str> = found.result()["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(hits.first(), Some(&"sum_numbers"), "the endpoint's own name ranks first: {hits:?}");
    assert!(!hits.iter().any(|h| ["echo", "utc_now", "add"].contains(h)), "only its own selection: {hits:?}");
    let through = find.tool("call_tool", json!({"name": "sum_numbers", "arguments": {"a": 2, "b": 40}})).await;
    assert_eq!(through.result()["structuredContent"]["sum"], 42, "{:?}", through.messages);
    let outside = find.tool("call_tool", json!({"name": "echo", "arguments": {"text": "hi"}})).await;
    assert!(outside.error_message().contains("Unknown tool: echo"), "{:?}", outside.messages);

    // Everything else lists as before.
    let everything = at(&server, "/mcp").call("tools/list", json!({})).await;
    assert!(names(&everything).contains(&"add".to_owned()), "{:?}", names(&everything));
    assert_eq!(names(&at(&server, "/mcp/math").call("tools/list", json!({})).await), ["echo", "increment", "greet"]);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("search.toml");
    std::fs::write(&file, config(endpoints)).unwrap();
    let out = mcp_e2e::server::run(None, &["check", "--config", file.to_str().unwrap()], &[]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", String::from_utf8_lossy(&out.stderr));
    let find_part = &report[report.find("endpoint /mcp/find").expect("the endpoint in check's report")..];
    assert!(find_part.lines().nth(1).unwrap().contains("discovery: search"), "{report}");
    assert!(!report[..report.find("endpoint /mcp/find").unwrap()].contains("discovery: search"), "{report}");
}

#[test]
fn check_names_each_endpoint_mistake_at_its_place() {
    let bad = r#"
[[endpoints]]
path = "/mcp/support"
adapters = ["dmeo"]
include = ["[unclosed"]
annotations = { readOnly = true }
discovery = "find"

[endpoints.tools.add]
name = "add two"

[[endpoints]]
path = "/mcp/more"
adapters = ["demo"]
include = ["echo"]

[endpoints.tools.add]
title = "Add"

[endpoints.tools.echo]
arguments = { text = 5, loud = true }

[[endpoints]]
path = "/healthz"
"#;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("endpoints.toml");
    std::fs::write(&file, config(bad)).unwrap();
    let out = mcp_e2e::server::run(None, &["check", "--config", file.to_str().unwrap()], &[]);
    let text = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let shown = config(bad);
    let line_of = |needle: &str| shown.lines().position(|l| l.contains(needle)).unwrap() + 1;
    for (needle, words) in [
        ("adapters = [\"dmeo\"]", "no adapter is named 'dmeo'"),
        ("include = [\"[unclosed\"]", "'[unclosed' is not a glob"),
        ("annotations = { readOnly", "'readOnly' is not a tool annotation"),
        ("name = \"add two\"", "'add two' is not a tool name"),
        ("path = \"/healthz\"", "a path the runtime serves itself"),
        ("discovery = \"find\"", "unknown mode 'find': use \"list\""),
    ] {
        let line = line_of(needle);
        assert!(text.contains(&format!(":{line}:")) && text.contains(words), "line {line} '{words}' in:\n{text}");
    }
    for words in [
        "did you mean `demo`?",
        "did you mean `readOnlyHint`?",
        "this endpoint does not serve 'add'",
        "5 does not fit the parameter's schema",
        "'loud' is not a parameter of this tool (its parameters: text)",
    ] {
        assert!(text.contains(words), "'{words}' in:\n{text}");
    }
}

/// Each endpoint is a protected resource of its own (RFC 9728, RFC 8707) against a real
/// authorization server: its metadata, its challenges, its audience and its scopes.
#[tokio::test]
async fn each_endpoint_is_a_protected_resource_of_its_own() {
    let issuer = mcp_e2e::issuer::Issuer::start();
    let config = format!(
        "{FIXTURES_CONFIG}\n[auth]\nresource = \"https://mcp.test/mcp\"\nauthorization_servers = [\"{iss}\"]\n\
         scopes_supported = [\"tools:read\"]\n[[auth.issuers]]\nissuer = \"{iss}\"\n\n\
         [[endpoints]]\npath = \"/mcp/admin\"\nscopes = [\"tools:admin\"]\nadapters = [\"demo\"]\n\n\
         [[endpoints]]\npath = \"/mcp/read\"\nresource = \"https://read.mcp.test/\"\nadapters = [\"demo\"]\n",
        iss = issuer.url
    );
    let server = Server::start(&config);
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let metadata = |path: &str| {
        let url = format!("{base}/.well-known/oauth-protected-resource{path}");
        async move { reqwest::get(url).await.unwrap() }
    };
    let admin = metadata("/mcp/admin").await.json::<Value>().await.unwrap();
    assert_eq!(admin["resource"], "https://mcp.test/mcp/admin", "{admin}");
    assert_eq!(admin["scopes_supported"], json!(["tools:read", "tools:admin"]));
    assert_eq!(metadata("/mcp/read").await.json::<Value>().await.unwrap()["resource"], "https://read.mcp.test/");
    assert_eq!(metadata("/mcp").await.json::<Value>().await.unwrap()["resource"], "https://mcp.test/mcp");
    assert_eq!(metadata("/mcp/nowhere").await.status(), 404);

    let echo = |path: &str, token: Option<String>| {
        let mcp = Mcp::new(&format!("{base}{path}"));
        async move {
            let body = mcp.body("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
            let auth = token.map(|t| format!("Bearer {t}"));
            mcp.send(&body, &[("authorization", auth.as_deref())]).await
        }
    };
    // Without a token: the challenge points at the endpoint's own metadata.
    let anonymous = echo("/mcp/admin", None).await;
    assert_eq!(anonymous.status, 401);
    let challenge = anonymous.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("resource_metadata=\"https://mcp.test/.well-known/oauth-protected-resource/mcp/admin\""),
        "{challenge}"
    );
    // A token for the endpoint (RFC 8707 resource = its URL) without its scope: 403 naming it.
    let reader = issuer.client_credentials("https://mcp.test/mcp/admin", "tools:read").await;
    let denied = echo("/mcp/admin", Some(reader.clone())).await;
    assert_eq!(denied.status, 403, "{:?}", denied.messages);
    let challenge = denied.headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("insufficient_scope") && challenge.contains("scope=\"tools:admin\""), "{challenge}");
    assert!(
        denied.error_message().contains("requests to /mcp/admin needs the scopes tools:admin"),
        "{}",
        denied.error_message()
    );
    // With the scope: served.
    let adminer = issuer.client_credentials("https://mcp.test/mcp/admin", "tools:admin").await;
    assert_eq!(echo("/mcp/admin", Some(adminer.clone())).await.text(0), "hi");
    // The endpoint's token is for that endpoint only: refused on /mcp and on another endpoint.
    for path in ["/mcp", "/mcp/read"] {
        let elsewhere = echo(path, Some(adminer.clone())).await;
        assert_eq!(elsewhere.status, 401, "{path}: {:?}", elsewhere.messages);
        assert!(elsewhere.error_message().contains("meant for another endpoint"), "{}", elsewhere.error_message());
    }
    // A token for the whole deployment works on every endpoint (their scopes still apply).
    let deployment = issuer.client_credentials("https://mcp.test/mcp", "tools:read").await;
    assert_eq!(echo("/mcp/read", Some(deployment.clone())).await.text(0), "hi");
    assert_eq!(echo("/mcp/admin", Some(deployment)).await.status, 403);
    let line = server.log_line("access denied: the endpoint's scopes").await;
    assert!(line.contains("endpoint=/mcp/admin") || line.contains("endpoint=\"/mcp/admin\""), "{line}");
}
