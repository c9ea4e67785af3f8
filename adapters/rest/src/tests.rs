//! The whole adapter against real HTTP upstreams on loopback (axum): what only shows end to
//! end inside the crate (trace context, re-sending after a connect failure). The black-box
//! scenarios through the runtime live in `tests/e2e/rest_adapter.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode, Uri};
use mcp_adapter_api::{Adapter, Build as _, BuildContext, CallContext, Outcome, ToolCall};
use serde_json::{Map, Value, json};

use crate::{Rest, RestConfig};

/// What an upstream saw: method, path and query as received, headers.
type Seen = Arc<Mutex<Vec<(Method, String, HeaderMap)>>>;

/// An upstream that records every request and answers `{"ok": true}` (503 on `/busy`).
async fn upstream() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap| {
        let log = Arc::clone(&log);
        async move {
            let busy = uri.path() == "/busy";
            // `/later/<n>`: 503 with `Retry-After: <n>`, whatever n is.
            let later = uri.path().strip_prefix("/later/").map(str::to_owned);
            log.lock().unwrap().push((method, uri.to_string(), headers));
            let status = if busy || later.is_some() { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
            let after = later.unwrap_or_else(|| "0".to_owned());
            (status, [("content-type", "application/json".to_owned()), ("retry-after", after)], r#"{"ok":true}"#)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// A loopback port nobody listens on.
fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

fn adapter(base_urls: &[&str], tools: Value) -> Rest {
    let mut config = json!({
        "base_urls": base_urls,
        "auth": {"kind": "api_key", "header": "X-Api-Key", "secret_env": "KEY"},
        "retry": {"max_attempts": 3, "initial_backoff_ms": 1, "max_backoff_ms": 5},
    });
    config["tools"] = tools;
    let config: RestConfig = serde_json::from_value(config).unwrap();
    Rest::build(&config, &BuildContext::with_env([("KEY", "k-123")].into_iter().collect())).unwrap()
}

async fn call(rest: &Rest, name: &str, cx: &CallContext) -> mcp_adapter_api::protocol::CallToolResult {
    let args = Map::new();
    let call = ToolCall { name, arguments: &args, input: Default::default() };
    match rest.call_tool(call, cx).await.unwrap() {
        Outcome::Complete(r) => r,
        Outcome::InputRequired(_) => panic!("no input rounds here"),
    }
}

#[tokio::test]
async fn sends_trace_context_credentials_and_fixed_headers() {
    let (url, seen) = upstream().await;
    let rest = adapter(&[&url], json!([{"name": "t", "description": "d", "path": "/x", "query": {"a": "b c"}}]));
    let mut cx = CallContext::detached(Duration::from_secs(5));
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    cx.propagation = vec![("traceparent", traceparent.to_owned()), ("baggage", "k=v".to_owned())];
    let result = call(&rest, "t", &cx).await;
    assert_eq!(result.structured_content, Some(json!({"ok": true})));
    let seen = seen.lock().unwrap();
    let (method, path, headers) = &seen[0];
    assert_eq!((method, path.as_str()), (&Method::GET, "/x?a=b%20c"));
    assert_eq!(headers["traceparent"], traceparent);
    assert_eq!(headers["baggage"], "k=v");
    assert_eq!(headers["x-api-key"], "k-123");
    assert!(headers["user-agent"].to_str().unwrap().starts_with("mcp-runtime/"));
}

#[tokio::test]
async fn a_post_that_never_connected_goes_to_the_next_upstream_but_a_503_is_final() {
    let (url, seen) = upstream().await;
    let dead = dead_url();
    let tools = json!([
        {"name": "create", "description": "d", "method": "POST", "path": "/items"},
        {"name": "busy", "description": "d", "method": "POST", "path": "/busy"},
    ]);
    // The dead upstream comes first in rotation for the first call.
    let rest = adapter(&[&dead, &url], tools);
    let cx = CallContext::detached(Duration::from_secs(5));
    let result = call(&rest, "create", &cx).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(seen.lock().unwrap().len(), 1);

    let result = call(&rest, "busy", &cx).await;
    assert!(result.is_error);
    let posts = seen.lock().unwrap().iter().filter(|(_, p, _)| p == "/busy").count();
    assert_eq!(posts, 1, "a POST that reached an upstream is not sent again");
}

#[tokio::test]
async fn an_unreachable_pool_is_a_backend_error_naming_the_upstream() {
    let dead = dead_url();
    let rest = adapter(&[&dead], json!([{"name": "t", "description": "d", "path": "/x"}]));
    let args = Map::new();
    let cx = CallContext::detached(Duration::from_secs(5));
    let err = rest.call_tool(ToolCall { name: "t", arguments: &args, input: Default::default() }, &cx).await;
    match err {
        Err(mcp_adapter_api::AdapterError::Backend(msg)) => {
            assert!(msg.starts_with(&format!("{dead} unreachable (3 attempts): ")), "{msg}");
        }
        other => panic!("expected a backend error, got {other:?}"),
    }
}

#[tokio::test]
async fn debug_output_never_shows_the_credential() {
    let rest = adapter(&["http://127.0.0.1:9"], json!([{"name": "t", "description": "d", "path": "/x"}]));
    let printed = format!("{rest:?}");
    assert!(printed.contains("x-api-key"), "the header is there: {printed}");
    assert!(!printed.contains("k-123"), "{printed}");
}

#[tokio::test]
async fn a_huge_retry_after_from_the_upstream_is_the_answer_not_a_panic() {
    let (url, seen) = upstream().await;
    let tools = json!([
        {"name": "u64", "description": "d", "path": "/later/18446744073709551615"},
        {"name": "i64", "description": "d", "path": "/later/9223372036854775807"},
        {"name": "long", "description": "d", "path": "/later/184467440737095516150000"},
    ]);
    let rest = adapter(&[&url], tools);
    let cx = CallContext::detached(Duration::from_secs(5));
    for name in ["u64", "i64", "long"] {
        let result = call(&rest, name, &cx).await;
        assert!(result.is_error, "{result:?}");
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(text.contains("HTTP 503") && text.contains("Retry-After: 86400 s"), "{text}");
    }
    assert_eq!(seen.lock().unwrap().len(), 3, "no retry when the wait ends past the deadline");
}

/// An upstream that accepts connections and never answers; counts the connections.
fn hung_upstream() -> (String, Arc<Mutex<Vec<std::net::TcpStream>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let held: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    (url, held)
}

#[tokio::test]
async fn a_hung_upstream_is_given_up_per_attempt_and_ejected() {
    let (ok_1, _) = upstream().await;
    let (ok_2, _) = upstream().await;
    let (hung, held) = hung_upstream();
    let config = json!({
        "base_urls": [ok_1, hung, ok_2],
        "retry": {"max_attempts": 3, "initial_backoff_ms": 1, "max_backoff_ms": 5, "attempt_timeout_ms": 300},
        "ejection": {"consecutive_failures": 2, "eject_ms": 60_000},
        "tools": [{"name": "t", "description": "d", "path": "/x"}],
    });
    let config: RestConfig = serde_json::from_value(config).unwrap();
    let rest = Rest::build(&config, &BuildContext::with_env(Default::default())).unwrap();
    let deadline = Duration::from_secs(2);
    for n in 0..12 {
        let cx = CallContext::detached(deadline);
        let started = std::time::Instant::now();
        let args = Map::new();
        let outcome = rest.call_tool(ToolCall { name: "t", arguments: &args, input: Default::default() }, &cx).await;
        let took = started.elapsed();
        let Ok(Outcome::Complete(result)) = outcome else { panic!("call {n}: {outcome:?} after {took:?}") };
        assert!(!result.is_error, "call {n}: {result:?}");
        assert!(took < Duration::from_millis(1_000), "call {n} took {took:?}");
    }
    let tried = held.lock().unwrap().len();
    assert_eq!(tried, 2, "the hung upstream is ejected after consecutive_failures timeouts");
}

/// An upstream that answers with the JSON body it received, and counts requests.
async fn echo_upstream() -> (String, Arc<Mutex<usize>>) {
    let count: Arc<Mutex<usize>> = Arc::default();
    let seen = Arc::clone(&count);
    let app = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let seen = Arc::clone(&seen);
        async move {
            *seen.lock().unwrap() += 1;
            ([("content-type", "application/json")], body)
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, count)
}

#[tokio::test]
async fn an_arguments_body_carries_only_declared_properties_unless_the_schema_opts_out() {
    let (url, received) = echo_upstream().await;
    let declared = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let mut open = declared.clone();
    open["additionalProperties"] = json!(true);
    let tools = json!([
        {"name": "strict", "description": "d", "method": "POST", "path": "/users", "body": "arguments", "input_schema": declared},
        {"name": "open", "description": "d", "method": "POST", "path": "/users", "body": "arguments", "input_schema": open},
    ]);
    let rest = adapter(&[&url], tools);
    let cx = CallContext::detached(Duration::from_secs(5));
    let send = async |name: &str, args: Value| {
        let args = args.as_object().unwrap().clone();
        rest.call_tool(ToolCall { name, arguments: &args, input: Default::default() }, &cx).await
    };
    match send("strict", json!({"name": "eve", "is_admin": true})).await {
        Err(mcp_adapter_api::AdapterError::InvalidArguments { field: Some(f), message }) => {
            assert_eq!(f, "is_admin", "{message}");
        }
        other => panic!("expected a refusal naming is_admin, got {other:?}"),
    }
    assert_eq!(*received.lock().unwrap(), 0, "nothing reached the upstream");
    let Ok(Outcome::Complete(r)) = send("strict", json!({"name": "eve"})).await else { panic!() };
    assert_eq!(r.structured_content, Some(json!({"name": "eve"})));
    let Ok(Outcome::Complete(r)) = send("open", json!({"name": "eve", "is_admin": true})).await else { panic!() };
    assert_eq!(r.structured_content, Some(json!({"name": "eve", "is_admin": true})), "the schema opted out");
}

#[tokio::test]
async fn calls_beyond_max_concurrent_wait_for_a_slot_until_their_deadline() {
    let (hung, held) = hung_upstream();
    let config = json!({
        "base_urls": [hung],
        "max_concurrent": 1,
        "retry": {"max_attempts": 1},
        "tools": [{"name": "t", "description": "d", "path": "/x"}],
    });
    let config: RestConfig = serde_json::from_value(config).unwrap();
    let rest = Arc::new(Rest::build(&config, &BuildContext::with_env(Default::default())).unwrap());
    let first = {
        let rest = Arc::clone(&rest);
        tokio::spawn(async move {
            let args = Map::new();
            let cx = CallContext::detached(Duration::from_secs(3));
            rest.call_tool(ToolCall { name: "t", arguments: &args, input: Default::default() }, &cx).await.is_err()
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let result = call(&rest, "t", &CallContext::detached(Duration::from_millis(300))).await;
    assert!(result.is_error, "{result:?}");
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("busy") && text.contains("max_concurrent"), "{text}");
    assert_eq!(held.lock().unwrap().len(), 1, "the second call never reached the upstream");
    first.abort();
}

/// A config with `token_exchange` (at a token endpoint nobody listens on) and `patch` merged in.
fn exchanging(base_url: &str, patch: Value) -> Result<Rest, mcp_adapter_api::ConfigProblem> {
    let mut config = json!({
        "base_urls": [base_url],
        "token_exchange": {"token_endpoint": dead_url() + "/token", "client_id": "c", "client_secret_env": "S",
                           "audience": "api"},
        "tools": [{"name": "t", "description": "d", "path": "/x"}],
    });
    for (k, v) in patch.as_object().unwrap() {
        config[k] = v.clone();
    }
    let config: RestConfig = serde_json::from_value(config).unwrap();
    Rest::build(&config, &BuildContext::with_env([("S", "s3cr3t"), ("KEY", "k")].into_iter().collect()))
        .map_err(|p| p.into_iter().next().expect("a problem"))
}

#[tokio::test]
async fn token_exchange_owns_authorization_and_needs_a_caller_token() {
    let (url, seen) = upstream().await;
    let bearer = json!({"auth": {"kind": "bearer", "secret_env": "KEY"}});
    assert_eq!(exchanging(&url, bearer).unwrap_err().key, "token_exchange");
    let header = json!({"tools": [{"name": "t", "description": "d", "path": "/x", "headers": {"Authorization": "x"}}]});
    assert_eq!(exchanging(&url, header).unwrap_err().key, "tools.t.headers");
    let api_key = json!({"auth": {"kind": "api_key", "header": "X-Api-Key", "secret_env": "KEY"}});
    let rest = exchanging(&url, api_key).unwrap();

    // No caller (auth off): a tool error, and nothing reaches the upstream.
    let result = call(&rest, "t", &CallContext::detached(Duration::from_secs(5))).await;
    assert!(result.is_error);
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("carried none"), "{text}");
    // A caller named by a static token has nothing to exchange either.
    let mut cx = CallContext::detached(Duration::from_secs(5));
    cx.identity = Some(mcp_adapter_api::Identity::new("robot"));
    assert!(call(&rest, "t", &cx).await.is_error);
    // An issuer's caller whose token endpoint is down: the failure is named, the token is not.
    let identity = mcp_adapter_api::Identity::issued("https://idp", "ada", Vec::new(), Map::new());
    cx.identity = Some(identity.with_subject_token("eyJ.subject.token"));
    let result = call(&rest, "t", &cx).await;
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(result.is_error && text.contains("unreachable") && !text.contains("eyJ.subject.token"), "{text}");
    assert!(seen.lock().unwrap().is_empty());
}
