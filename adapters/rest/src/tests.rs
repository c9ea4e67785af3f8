//! The whole adapter against real HTTP upstreams on loopback (axum): what only shows end to
//! end inside the crate (trace context, re-sending after a connect failure). The black-box
//! scenarios through the runtime live in `tests/rest_adapter.rs`.

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
            log.lock().unwrap().push((method, uri.to_string(), headers));
            let status = if busy { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
            (status, [("content-type", "application/json")], r#"{"ok":true}"#)
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
async fn an_unreachable_pool_is_a_backend_error_without_the_upstream_url() {
    let dead = dead_url();
    let rest = adapter(&[&dead], json!([{"name": "t", "description": "d", "path": "/x"}]));
    let args = Map::new();
    let cx = CallContext::detached(Duration::from_secs(5));
    let err = rest.call_tool(ToolCall { name: "t", arguments: &args, input: Default::default() }, &cx).await;
    match err {
        Err(mcp_adapter_api::AdapterError::Backend(msg)) => {
            assert!(msg.contains("unreachable (3 attempts)"), "{msg}");
            assert!(!msg.contains(&dead), "{msg}");
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
