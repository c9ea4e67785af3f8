//! The benchmark ceiling: an axum handler that parses the JSON-RPC body and answers with a
//! canned result — no header checks, no envelope, no schema validation, no dispatch.
//!
//! `bench-bare-axum ADDR [TOOLS_LIST_RESULT_FILE]` serves `POST /mcp` on ADDR and prints
//! `listening on http://ADDR/mcp`. `tools/list` answers with the result object read from
//! the file (bench-peers.sh passes the runtime's own, so both send the same bytes);
//! anything else gets a one-text-block `tools/call` result. SIGTERM stops it cleanly (its
//! profile-guided build, loadtest/lib/procs.sh `build_bare`, needs the counts an instrumented
//! build writes on exit).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::post;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The part of a JSON-RPC request the ceiling looks at; `params` is parsed (and dropped)
/// like any server must.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    method: &'a str,
    #[allow(dead_code)]
    params: Option<serde_json::Value>,
}

const CALL_RESULT: &str = r#"{"resultType":"complete","content":[{"type":"text","text":"canned"}]}"#;

async fn mcp(State(tools_list): State<Arc<str>>, body: Bytes) -> impl IntoResponse {
    let Ok(req) = serde_json::from_slice::<Request<'_>>(&body) else {
        return (axum::http::StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], String::new());
    };
    let result = if req.method == "tools/list" { &*tools_list } else { CALL_RESULT };
    let out = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#, req.id.get(), result);
    (axum::http::StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], out)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    let tools_list: Arc<str> = match args.next() {
        Some(path) => std::fs::read_to_string(path)?.trim().into(),
        None => r#"{"resultType":"complete","tools":[],"ttlMs":60000,"cacheScope":"public"}"#.into(),
    };
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let app = Router::new().route("/mcp", post(mcp)).with_state(tools_list);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    axum::serve(listener, app).with_graceful_shutdown(async move { term.recv().await.unwrap_or(()) }).await
}
