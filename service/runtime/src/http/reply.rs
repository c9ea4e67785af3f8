//! HTTP responses: a method's [`Reply`] as JSON, a JSON-RPC error with its status, 202, or
//! an SSE stream.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::Stream;
use mcp_protocol::RequestId;

use tokio::sync::mpsc;

use crate::rpc::{Frame, Kind, Reply, RpcError, response};

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// The response for a method's answer.
pub fn render(reply: Reply) -> Response {
    match reply {
        Reply::Message(status, body) => json(status, body),
        Reply::Error(id, err) => error(id.as_ref(), &err),
        Reply::Stream(frames) => sse(events(frames)),
        Reply::Accepted => accepted(),
    }
}

/// A streamed answer as SSE events, one per frame.
fn events(rx: mpsc::Receiver<Frame>) -> impl Stream<Item = Result<Bytes, std::convert::Infallible>> + Send {
    futures_util::stream::unfold(rx, |mut rx| async move {
        let frame = rx.recv().await?;
        let bytes = match frame {
            Frame::Message(message) => event(&message),
            Frame::KeepAlive => keepalive(),
        };
        Some((Ok(bytes), rx))
    })
}

/// A JSON body with `status`. Built directly: axum's `(status, headers, Vec<u8>)` would set
/// `Content-Type: application/octet-stream` first and then replace it.
pub fn json(status: StatusCode, body: Vec<u8>) -> Response {
    let mut res = Response::new(Body::from(body));
    *res.status_mut() = status;
    res.headers_mut().insert(header::CONTENT_TYPE, JSON);
    res
}

/// A JSON-RPC error with the status its kind calls for (405 adds `Allow: POST`).
pub fn error(id: Option<&RequestId>, err: &RpcError) -> Response {
    let (status, _) = err.kind.wire();
    let mut res = json(status, response::error(id, err));
    match err.kind {
        Kind::MethodNotAllowed => {
            res.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST"));
        }
        Kind::RateLimited | Kind::Overloaded => {
            // Whole seconds, rounded up (RFC 9110 §10.2.3).
            let ms = err
                .data
                .as_ref()
                .and_then(|d| d.get("retryAfterMs"))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1000);
            res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(ms.div_ceil(1000).max(1)));
        }
        _ => {}
    }
    res
}

/// 202 Accepted, no body (notification POSTs, MCP 2026-07-28 basic/transports/streamable-http § Notifications).
pub fn accepted() -> Response {
    StatusCode::ACCEPTED.into_response()
}

/// An SSE response (MCP 2026-07-28 basic/transports/streamable-http § Responses: JSON or SSE): no buffering in proxies, no caching.
pub fn sse(events: impl Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache, no-transform")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(events))
        .expect("static headers are valid")
}

/// One SSE event carrying one JSON-RPC message on a single `data:` line.
pub fn event(message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// An SSE comment: keeps idle proxies from closing the stream; clients ignore it.
pub fn keepalive() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}
