//! The `mcp` adapter with real MCP servers as upstreams, installed pinned by
//! tests/interop/setup.sh: the reference `server-everything` over stdio and over Streamable
//! HTTP (2025-era: `initialize`, a held session), `server-filesystem` over stdio on a temp
//! folder, and our own runtime (2026-07-28) as the upstream of another runtime. Calls pass
//! through (arguments, progress, `structuredContent`, errors), the upstream's questions come
//! back as our MRTR rounds, a `kill -9` of a hosted server fails only the call in flight, and
//! an upstream's list change reaches our listeners.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_e2e::procs::processes_with;
use mcp_e2e::schema::assert_response;
use mcp_e2e::wait::{eventually, until};
use mcp_e2e::{Answer, Mcp, Server, paths};
use serde_json::{Value, json};

/// Node and the installed reference servers; fails loudly when setup.sh did not run.
fn upstreams() -> (PathBuf, PathBuf) {
    let dir = paths::interop_dir();
    let node = dir.join("bin/node");
    let modules = dir.join("upstreams/node_modules/@modelcontextprotocol");
    assert!(
        node.is_file() && modules.join("server-everything/dist/index.js").is_file(),
        "the reference MCP servers are not installed under {}: run `bash tests/interop/setup.sh`",
        dir.display()
    );
    (node, modules)
}

/// An `[[adapters]]` section hosting `server-everything` over stdio, with `extra` keys.
fn everything_stdio(extra: &str) -> String {
    let (node, modules) = upstreams();
    let script = modules.join("server-everything/dist/index.js");
    format!(
        r#"
[[adapters]]
name = "everything"
kind = "mcp"
command = "{}"
args = ["{}", "stdio"]
prefix = "ev_"
{extra}
"#,
        node.display(),
        script.display()
    )
}

/// The tool names `s` lists once its upstream's catalog arrived (it is fetched at start;
/// when that fetch fails, e.g. on a machine too busy for the deadline, it is retried).
async fn listed_tools(s: &Server) -> Vec<String> {
    let mcp = s.mcp();
    eventually(
        Duration::from_secs(30),
        || format!("no tools listed; the runtime's log:\n{}", s.stderr()),
        || async {
            let tools = mcp.call("tools/list", json!({})).await;
            let names: Vec<String> = tools.result()["tools"]
                .as_array()?
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect();
            (!names.is_empty()).then_some(names)
        },
    )
    .await
}

/// The result of `a`, checked against the official schema of `tools/call`.
fn tool_result(a: &Answer) -> &Value {
    assert_response("tools/call", a.message());
    assert!(a.message().get("error").is_none(), "{:?}", a.messages);
    a.result()
}

#[tokio::test]
async fn everything_over_stdio_passes_calls_resources_prompts_and_progress_through() {
    let s = Server::start(&everything_stdio(r#"deny = ["get-env"]"#));
    let mcp = s.mcp();
    listed_tools(&s).await;

    let tools = mcp.call("tools/list", json!({})).await;
    assert_response("tools/list", tools.message());
    let names: Vec<&str> =
        tools.result()["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"ev_echo") && names.contains(&"ev_get-sum"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("get-env")), "deny = [\"get-env\"] leaves it out: {names:?}");
    assert!(names.iter().all(|n| n.starts_with("ev_")), "{names:?}");
    // We declare `roots` at `initialize`: the tool the upstream offers only to clients with
    // roots is listed, and runs (a stdio server hears no roots: one process serves every caller).
    assert!(names.contains(&"ev_get-roots-list"), "{names:?}");
    let roots = mcp.tool("ev_get-roots-list", json!({})).await;
    let text = tool_result(&roots)["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("supports roots but no roots"), "{text}");

    let echo = mcp.tool("ev_echo", json!({"message": "hello upstream"})).await;
    assert_eq!(tool_result(&echo)["content"][0]["text"], "Echo: hello upstream");

    let sum = mcp.tool("ev_get-sum", json!({"a": 2, "b": 40})).await;
    assert!(tool_result(&sum)["content"][0]["text"].as_str().unwrap().contains("42"), "{:?}", sum.messages);

    let weather = mcp.tool("ev_get-structured-content", json!({"location": "New York"})).await;
    assert!(tool_result(&weather)["structuredContent"]["temperature"].is_number(), "{:?}", weather.messages);

    // Arguments that fail the upstream's schema reach the upstream, and its own answer comes
    // back: a tool error the model can read and retry (SEP-1303), not our `-32602`.
    let bad = mcp.tool("ev_echo", json!({})).await;
    let r = tool_result(&bad);
    assert_eq!(r["isError"], true, "{:?}", bad.messages);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("validation"), "the upstream's words: {r}");

    // Progress of the upstream arrives on our stream, in order.
    let body = mcp.body(
        "tools/call",
        json!({"name": "ev_trigger-long-running-operation", "arguments": {"duration": 1, "steps": 4}, "_meta": {"progressToken": "p1"}}),
    );
    let long = mcp.send(&body, &[]).await;
    assert!(long.is_sse(), "progress needs a stream: {:?}", long.messages);
    let progress: Vec<f64> = long.notifications().iter().filter_map(|n| n["params"]["progress"].as_f64()).collect();
    assert_eq!(progress.len(), 4, "{:?}", long.messages);
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    assert!(long.notifications().iter().all(|n| n["params"]["progressToken"] == "p1"));
    assert_response("tools/call", long.message());

    let resources = mcp.call("resources/list", json!({})).await;
    assert_response("resources/list", resources.message());
    let uri = resources.result()["resources"][0]["uri"].as_str().expect("a listed resource").to_owned();
    let read = mcp.call("resources/read", json!({"uri": uri})).await;
    assert_response("resources/read", read.message());
    assert_eq!(read.result()["contents"][0]["uri"], uri.as_str());

    let prompt = mcp.call("prompts/get", json!({"name": "ev_simple-prompt"})).await;
    assert_response("prompts/get", prompt.message());
    assert!(prompt.result()["messages"][0]["content"]["text"].is_string(), "{:?}", prompt.messages);
}

/// Runs `ev_trigger-elicitation-request`: the upstream's `elicitation/create` comes back as
/// our `input_required`; the retry with the answer completes the re-run call.
async fn elicitation_round(mcp: &Mcp) {
    let first = mcp.tool("ev_trigger-elicitation-request", json!({})).await;
    assert_response("tools/call", first.message());
    let r = first.result();
    assert_eq!(r["resultType"], "input_required", "{:?}", first.messages);
    assert_eq!(r["inputRequests"]["upstream-0"]["method"], "elicitation/create");
    let state = r["requestState"].as_str().expect("our sealed state").to_owned();
    assert!(!state.contains("upstream"), "the state is sealed, not readable: {state}");

    let answer = json!({"action": "accept", "content": {"name": "Ada", "check": true}});
    let retry =
        mcp.tool_retry("ev_trigger-elicitation-request", json!({}), json!({"upstream-0": answer}), &state).await;
    let done = tool_result(&retry);
    assert_eq!(done["resultType"], "complete", "{:?}", retry.messages);
    let text: String = done["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect();
    assert!(text.contains("Ada"), "the upstream saw the answer: {text}");

    // A caller that cannot answer an elicitation is told so, with the capability it lacks.
    let plain = mcp.with_capabilities(json!({}));
    let refused = plain.tool("ev_trigger-elicitation-request", json!({})).await;
    assert_eq!(refused.error_code(), Some(-32021), "{:?}", refused.messages);
}

trait Retry {
    async fn tool_retry(&self, name: &str, arguments: Value, responses: Value, state: &str) -> Answer;
}

impl Retry for Mcp {
    async fn tool_retry(&self, name: &str, arguments: Value, responses: Value, state: &str) -> Answer {
        let params = json!({"name": name, "arguments": arguments, "inputResponses": responses, "requestState": state});
        self.call("tools/call", params).await
    }
}

#[tokio::test]
async fn a_2025_era_upstream_question_becomes_our_input_round_over_stdio() {
    let s = Server::start(&everything_stdio(""));
    listed_tools(&s).await;
    elicitation_round(&s.mcp()).await;
}

/// `server-everything` over Streamable HTTP on a free port; killed when dropped.
struct HttpEverything {
    child: Child,
    url: String,
}

impl HttpEverything {
    async fn start() -> Self {
        Self::start_on(TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()).await
    }

    async fn start_on(port: u16) -> Self {
        let (node, modules) = upstreams();
        let child = Command::new(node)
            .arg(modules.join("server-everything/dist/index.js"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything");
        let url = format!("http://127.0.0.1:{port}/mcp");
        until(
            Duration::from_secs(20),
            || format!("server-everything did not listen on {port}"),
            || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        )
        .await;
        Self { child, url }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn everything_over_streamable_http_holds_a_2025_session() {
    let upstream = HttpEverything::start().await;
    let s = Server::start(&format!(
        "[[adapters]]\nname = \"remote\"\nkind = \"mcp\"\nurl = \"{}\"\nprefix = \"ev_\"\nallow = [\"echo\", \"get-*\", \"trigger-*\"]\n",
        upstream.url
    ));
    let mcp = s.mcp();
    let names = listed_tools(&s).await;
    assert!(names.iter().any(|n| n == "ev_echo"), "{names:?}");
    assert!(!names.iter().any(|n| n == "ev_gzip-file-as-resource"), "allow filters: {names:?}");
    assert!(names.iter().any(|n| n == "ev_get-roots-list"), "offered to clients with roots: {names:?}");
    let echo = mcp.tool("ev_echo", json!({"message": "over http"})).await;
    assert_eq!(tool_result(&echo)["content"][0]["text"], "Echo: over http");
    elicitation_round(&mcp).await;

    // The upstream restarts and forgets every session: the adapter initializes again.
    let port: u16 = upstream.url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/mcp").parse().unwrap();
    drop(upstream);
    let _again = HttpEverything::start_on(port).await;
    let echo = mcp.tool("ev_echo", json!({"message": "new session"})).await;
    assert_eq!(tool_result(&echo)["content"][0]["text"], "Echo: new session");
}

#[tokio::test]
async fn filesystem_over_stdio_serves_a_temp_folder() {
    let (node, modules) = upstreams();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "written by the test\n").unwrap();
    let s = Server::start(&format!(
        r#"
[[adapters]]
name = "files"
kind = "mcp"
command = "{}"
args = ["{}", "{}"]
prefix = "fs_"
deny = ["write_*", "edit_*", "move_*", "create_*"]
"#,
        node.display(),
        modules.join("server-filesystem/dist/index.js").display(),
        root.display()
    ));
    let mcp = s.mcp();
    listed_tools(&s).await;
    let tools = mcp.call("tools/list", json!({})).await;
    let names: Vec<&str> =
        tools.result()["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"fs_read_text_file") && !names.contains(&"fs_write_file"), "{names:?}");

    let path = root.join("notes.txt");
    let read = mcp.tool("fs_read_text_file", json!({"path": path})).await;
    assert!(tool_result(&read)["content"][0]["text"].as_str().unwrap().contains("written by the test"));

    // Outside the allowed folder: the upstream's own refusal, as a tool error the model reads.
    let outside = mcp.tool("fs_read_text_file", json!({"path": "/etc/passwd"})).await;
    assert_eq!(tool_result(&outside)["isError"], true, "{:?}", outside.messages);
}

#[tokio::test]
async fn kill_9_of_a_hosted_server_fails_the_call_in_flight_and_the_next_one_succeeds() {
    let marker = format!("everything-{}", std::process::id());
    let (node, modules) = upstreams();
    // A symlink named after the test, so its processes (and only its) can be found.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join(format!("{marker}.js"));
    std::os::unix::fs::symlink(modules.join("server-everything/dist/index.js"), &script).unwrap();
    let s = Server::start(&format!(
        "[[adapters]]\nname = \"everything\"\nkind = \"mcp\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\nrestart = {{ initial_backoff_ms = 50, max_backoff_ms = 200 }}\n",
        node.display(),
        script.display()
    ));
    let mcp = s.mcp();
    listed_tools(&s).await;
    let before = mcp.tool("echo", json!({"message": "before"})).await;
    assert_eq!(tool_result(&before)["content"][0]["text"], "Echo: before");
    let node_pid = || processes_with(&marker).into_iter().find(|p| !is_supervisor(*p));
    let victim = node_pid().expect("the hosted server runs");

    let slow = tokio::spawn({
        let mcp = mcp.clone();
        async move { mcp.tool("trigger-long-running-operation", json!({"duration": 20, "steps": 20})).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(Command::new("kill").args(["-9", &victim.to_string()]).status().unwrap().success());
    let failed = tokio::time::timeout(Duration::from_secs(10), slow).await.expect("the call ends at once").unwrap();
    let r = tool_result(&failed);
    assert_eq!(r["isError"], true, "{:?}", failed.messages);
    assert!(r["content"][0]["text"].as_str().unwrap().contains("exited"), "{:?}", failed.messages);

    let restarted = eventually(
        Duration::from_secs(15),
        || "no new server process".to_owned(),
        || std::future::ready(node_pid().filter(|p| *p != victim)),
    )
    .await;
    assert_ne!(restarted, victim);
    let after = mcp.tool("echo", json!({"message": "after"})).await;
    assert_eq!(tool_result(&after)["content"][0]["text"], "Echo: after");
}

/// True for the runtime's supervisor process (its argv names the supervisor mode).
fn is_supervisor(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("__mcp-cli-supervise"))
}

const UPSTREAM: &str = r#"
[server]
name = "upstream-runtime"

[[adapters]]
name = "conformance"
kind = "fixtures"
set = "conformance"
"#;

#[tokio::test]
async fn our_runtime_upstream_of_our_runtime_relays_input_rounds_and_list_changes() {
    let upstream = Server::start(UPSTREAM);
    let proxy = Server::start(&format!("[[adapters]]\nname = \"inner\"\nkind = \"mcp\"\nurl = \"{}\"\n", upstream.url));
    let mcp = proxy.mcp();
    listed_tools(&proxy).await;

    let text = mcp.tool("test_simple_text", json!({})).await;
    assert_eq!(tool_result(&text)["content"][0]["text"], "This is a simple text response for testing.");
    let err = mcp.tool("test_error_handling", json!({})).await;
    assert_eq!(tool_result(&err)["isError"], true);

    // A modern upstream's input_required round: its requestState rides sealed inside ours.
    let first = mcp.tool("test_input_required_result_elicitation", json!({})).await;
    assert_response("tools/call", first.message());
    assert_eq!(first.result()["resultType"], "input_required", "{:?}", first.messages);
    let state = first.result()["requestState"].as_str().unwrap().to_owned();
    let key = first.result()["inputRequests"].as_object().unwrap().keys().next().unwrap().clone();
    let answer = json!({ (key.clone()): {"action": "accept", "content": {"name": "Grace"}} });
    let retry = mcp.tool_retry("test_input_required_result_elicitation", json!({}), answer, &state).await;
    let done = tool_result(&retry);
    assert!(done["content"][0]["text"].as_str().unwrap().contains("Grace"), "{:?}", retry.messages);

    // Answers sent with a first request reach the upstream, which completes with them alone
    // (and ignores the keys it did not ask for), as it does when asked directly.
    let responses = json!({
        (key): {"action": "accept", "content": {"name": "Ada"}},
        "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
    });
    let params =
        json!({"name": "test_input_required_result_elicitation", "arguments": {}, "inputResponses": responses});
    let at_once = mcp.call("tools/call", params).await;
    let done = tool_result(&at_once);
    assert_eq!(done["resultType"], "complete", "{:?}", at_once.messages);
    assert!(done["content"][0]["text"].as_str().unwrap().contains("Ada"), "{:?}", at_once.messages);

    // The upstream's list change reaches our listeners (the upstream reloads a new tool).
    let mut listen =
        mcp.open_stream("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    listen.until("notifications/subscriptions/acknowledged", Duration::from_secs(5)).await.expect("ack");
    let more = format!("{UPSTREAM}\n[[adapters]]\nname = \"demo\"\nkind = \"fixtures\"\nset = \"demo\"\n");
    std::fs::write(&upstream.config_path, more).unwrap();
    upstream.signal("HUP");
    listen.until("notifications/tools/list_changed", Duration::from_secs(15)).await.expect("list_changed relayed");
    let tools = mcp.call("tools/list", json!({})).await;
    assert!(tools.result()["tools"].as_array().unwrap().len() > 20, "the new tools are listed: {:?}", tools.messages);
}

#[tokio::test]
async fn bad_upstream_configs_are_refused_naming_the_key() {
    let (status, log) = Server::start_failing(
        "[[adapters]]\nname = \"x\"\nkind = \"mcp\"\nurl = \"http://127.0.0.1:9/mcp\"\ncommand = \"node\"\n",
        &[],
    );
    assert!(!status.success() && log.contains("adapters.x.url") && log.contains("exactly one"), "{log}");
    let (status, log) = Server::start_failing(
        "[[adapters]]\nname = \"x\"\nkind = \"mcp\"\ncommand = \"sh\"\nenv = { LD_PRELOAD = \"/tmp/x.so\" }\n",
        &[],
    );
    assert!(!status.success() && log.contains("adapters.x.env.LD_PRELOAD"), "{log}");
    let (status, log) = Server::start_failing("[[adapters]]\nname = \"x\"\nkind = \"mcp\"\nurl = \"ftp://h/\"\n", &[]);
    assert!(!status.success() && log.contains("adapters.x.url"), "{log}");
    // One hosted process serves every caller: it cannot be called as each of them.
    let (status, log) = Server::start_failing(
        "[[adapters]]\nname = \"x\"\nkind = \"mcp\"\ncommand = \"node\"\ntoken_exchange = { token_endpoint = \
         \"https://idp.test/token\", client_id = \"rt\", client_secret_env = \"S\", audience = \"a\" }\n",
        &[("S", "secret")],
    );
    assert!(
        !status.success() && log.contains("adapters.x.token_exchange") && log.contains("reach the server by `url`"),
        "{log}"
    );
}

#[tokio::test]
async fn an_unreachable_upstream_starts_empty_and_calls_fail_cleanly() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let s = Server::start(&format!(
        "[[adapters]]\nname = \"gone\"\nkind = \"mcp\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nrequest_timeout_ms = 500\n"
    ));
    let tools = s.mcp().call("tools/list", json!({})).await;
    assert_eq!(tools.result()["tools"], json!([]), "{:?}", tools.messages);
}
