//! The protection stack in front of the MCP endpoint ([`Guard`]), in one function per step
//! that needs a future of its own.
//! Every refusal is a JSON-RPC error body with the status of its kind, and is counted in
//! `mcp_server_rejected_total{reason}`.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use futures_util::future::BoxFuture;
use hyper::body::{Frame, SizeHint};
use tokio::sync::OwnedSemaphorePermit;
use tower::Service;
use tracing::Instrument as _;

use super::{endpoint, inbound, reply};
use crate::rpc::{Kind, RpcError, headers};
use crate::state::AppState;
use crate::telemetry::{HTTP_SPAN, REQUEST_ID_HEADER};

/// The MCP endpoint behind its protection stack.
pub fn protect(state: &Arc<AppState>) -> Guard {
    Guard(Arc::clone(state))
}

/// A generated request id: a random (version 4) UUID. The bits come from fastrand's
/// per-thread generator rather than a `getrandom` system call: a request id correlates log
/// lines, it guards nothing.
fn new_request_id() -> HeaderValue {
    // Version 4 and the RFC 9562 variant, as `uuid::Uuid::new_v4` sets them.
    let bits = fastrand::u128(..) & 0xFFFF_FFFF_FFFF_4FFF_BFFF_FFFF_FFFF_FFFF | 0x4000_8000_0000_0000_0000;
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    uuid::Uuid::from_u128(bits).hyphenated().encode_lower(&mut text);
    // One allocation that the request's header and the response's share (a clone counts).
    HeaderValue::from_maybe_shared(Bytes::from_owner(text)).expect("a UUID is a valid header value")
}

/// The protection stack and the endpoint, as one service with one boxed future per request.
/// Plain functions rather than a layer per step (tower-http's request-id layers, axum's
/// `from_fn`): each of those boxes a service or a future, or fills the request's extension
/// map, per request (measured: five `from_fn` layers cost ~20 % of a `tools/call`, the two
/// request-id layers' extension maps ~2 %), while the order and every refusal stay as listed
/// here.
#[derive(Clone)]
pub struct Guard(Arc<AppState>);

impl Service<Request> for Guard {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        self.serve(req)
    }
}

impl Guard {
    /// [`Service::call`] without `&mut`: the service is shared.
    pub fn serve(&self, req: Request) -> BoxFuture<'static, Result<Response, Infallible>> {
        Box::pin(guard(Arc::clone(&self.0), req))
    }
}

/// The stack, in order, as few nested futures as it takes: each one is moved as it is built
/// and stores its arguments again, so one level less is a smaller and cheaper request.
///
/// 1. The request id: every answer, even a 503 from the shedding below, carries an
///    `x-request-id` (the caller's, or a new UUID) that log lines can be matched with.
/// 2. The trace span, so the log lines of everything below (refusals included) carry the
///    request id; opened only when spans are on.
/// 3. `limits.request_timeout_ms` until the response head: 504 after it. Outside the limits,
///    so it bounds a slow upload as well as the handler, but only until the response head, so
///    SSE bodies of long calls and listen streams run on. A quiet call switches to SSE after
///    one keep-alive interval (shorter, checked at start-up), so only clients that cannot take
///    SSE wait for the whole call within this budget.
/// 4. Load shedding, body size and JSON depth, then the endpoint ([`admitted`]).
async fn guard(state: Arc<AppState>, mut req: Request) -> Result<Response, Infallible> {
    let id = match req.headers().get(REQUEST_ID_HEADER) {
        Some(id) => id.clone(),
        None => {
            let id = new_request_id();
            req.headers_mut().insert(REQUEST_ID_HEADER, id.clone());
            id
        }
    };
    let span = state.telemetry.spans.then(|| http_span(&req));
    let limit = state.limits.request_timeout;
    // One clock read for both deadlines; `request_timeout_ms` has no upper bound, so the
    // deadline saturates (a year) rather than overflow.
    let arrived = tokio::time::Instant::now();
    let deadline = arrived.checked_add(limit).unwrap_or_else(|| arrived + Duration::from_secs(365 * 86_400));
    let work = tokio::time::timeout_at(deadline, admitted(&state, req, arrived));
    let answer = match span {
        Some(span) => work.instrument(span).await,
        None => work.await,
    };
    let mut res = answer.unwrap_or_else(|_| {
        refuse(
            &state,
            &RpcError::new(
                Kind::TimedOut,
                format!(
                    "Gateway Timeout: no answer within limits.request_timeout_ms ({} ms); accept text/event-stream to receive long calls as a stream",
                    limit.as_millis()
                ),
            ),
        )
    });
    res.headers_mut().entry(REQUEST_ID_HEADER).or_insert(id);
    Ok(res)
}

/// The per-request span (see [`guard`]).
fn http_span(req: &Request) -> tracing::Span {
    let id = req.headers().get(REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
    tracing::info_span!(
        HTTP_SPAN,
        request_id = id,
        "http.request.method" = %req.method(),
        "url.path" = req.uri().path(),
        "server.address" = inbound::authority(req.version(), req.uri(), req.headers()).unwrap_or(""),
        "network.protocol.version" = protocol_version(req.version()),
    )
}

/// The OpenTelemetry `network.protocol.version` of an HTTP version.
fn protocol_version(version: axum::http::Version) -> &'static str {
    match version {
        axum::http::Version::HTTP_2 => "2",
        axum::http::Version::HTTP_10 => "1.0",
        axum::http::Version::HTTP_3 => "3",
        _ => "1.1",
    }
}

/// Load shedding before any body is read: a full server answers 503 at once. At most
/// `limits.max_concurrent_requests` requests at once; the slot is held until the response
/// body ends, so a long call streaming over SSE still counts. Listen streams and 2025-era GET
/// streams are exempt once opened (they have their own caps, `server.max_listen_streams` and
/// `server.max_listen_streams_per_caller`); the `Mcp-Method` header (or the GET) tells them
/// apart, and a request whose header lies about its method is refused by the endpoint before
/// it runs. Then the body ([`read_body`]) and the endpoint.
async fn admitted(state: &Arc<AppState>, req: Request, arrived: tokio::time::Instant) -> Response {
    let Ok(slot) = Arc::clone(&state.slots).try_acquire_owned() else {
        let mut res = refuse(
            state,
            &RpcError::new(
                Kind::Overloaded,
                format!(
                    "Service Unavailable: this server is at limits.max_concurrent_requests ({}); retry shortly",
                    state.limits.max_concurrent_requests
                ),
            ),
        );
        res.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(state.limits.retry_after_seconds));
        return res;
    };
    let listen = req.method() == axum::http::Method::GET
        || req.headers().get(headers::METHOD).is_some_and(|m| m == "subscriptions/listen");
    let (parts, body) = req.into_parts();
    let bytes = match read_body(state, &parts.headers, body, arrived).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let res = endpoint::handle(state, &parts, bytes, arrived.into_std()).await;
    if listen {
        return res;
    }
    let (parts, body) = res.into_parts();
    Response::from_parts(parts, Body::new(Held { body, _slot: slot }))
}

/// A response body that holds a concurrency slot until it is dropped, and says everything
/// else its body says: the size hint too, so a JSON answer keeps its `Content-Length`.
struct Held {
    body: Body,
    _slot: OwnedSemaphorePermit,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Body size before buffering, the only place that reads the body off the socket: reads it
/// with `server.max_body_bytes` as the limit (413 past it). Then the JSON depth on the
/// buffered bytes, before serde builds anything recursive ([`exceeds_depth`]). A refusal is
/// the answer. `arrived`: when the request's head was in, where the body's time starts.
async fn read_body(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    body: Body,
    arrived: tokio::time::Instant,
) -> Result<Bytes, Response> {
    let limit = state.server.max_body_bytes;
    let too_large = || {
        RpcError::new(
            Kind::PayloadTooLarge,
            format!("Payload Too Large: the body exceeds server.max_body_bytes ({limit} bytes)"),
        )
    };
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(refuse(state, &too_large()));
    }
    // Slowloris: the whole body within `limits.body_read_timeout_ms`, however it trickles in;
    // then 408 (RFC 9110 §15.5.9), and hyper closes the connection since the body was not read.
    let read_timeout = state.limits.body_read_timeout;
    let Ok(read) = tokio::time::timeout_at(arrived + read_timeout, axum::body::to_bytes(body, limit)).await else {
        let mut res = refuse(
            state,
            &RpcError::new(
                Kind::RequestTimeout,
                format!(
                    "Request Timeout: the body did not arrive within limits.body_read_timeout_ms ({} ms)",
                    read_timeout.as_millis()
                ),
            ),
        );
        res.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Err(res);
    };
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            let over = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            let err = if over {
                too_large()
            } else {
                RpcError::new(Kind::InvalidRequest, "Bad Request: the body could not be read")
            };
            return Err(refuse(state, &err));
        }
    };
    // JSON depth: bodies nested deeper than `limits.max_json_depth` get 400 `-32700` (what
    // serde's own recursion limit answers too).
    let depth = state.limits.max_json_depth;
    if exceeds_depth(&bytes, depth) {
        return Err(refuse(
            state,
            &RpcError::new(
                Kind::Parse,
                format!("Parse error: the JSON body nests deeper than limits.max_json_depth ({depth} levels)"),
            ),
        ));
    }
    Ok(bytes)
}

/// True when arrays/objects in `json` nest deeper than `limit`. A linear scan that skips
/// string contents (escapes included); malformed input is left for the parser to report.
/// Strings are most of a request, so it jumps through them with `memchr` (SIMD) instead of
/// looking at every byte (measured: 2.8 k of a `tools/call`'s instructions byte by byte).
pub fn exceeds_depth(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut rest = json;
    // Outside strings: the next quote or bracket.
    while let Some(i) = rest.iter().position(|b| matches!(b, b'"' | b'{' | b'[' | b'}' | b']')) {
        let at = rest[i];
        rest = &rest[i + 1..];
        match at {
            b'"' => {
                // Inside a string: to its closing quote; a backslash escapes the next byte.
                loop {
                    let Some(j) = memchr::memchr2(b'"', b'\\', rest) else { return false };
                    let quote = rest[j] == b'"';
                    rest = rest.get(j + if quote { 1 } else { 2 }..).unwrap_or_default();
                    if quote {
                        break;
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            _ => depth = depth.saturating_sub(1),
        }
    }
    false
}

fn refuse(state: &AppState, err: &RpcError) -> Response {
    state.metrics.rejected(err.kind.as_str());
    reply::error(None, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_request_ids_are_version_4_uuids() {
        let (a, b) = (new_request_id(), new_request_id());
        let a = uuid::Uuid::parse_str(a.to_str().unwrap()).unwrap();
        assert_eq!(a.get_version(), Some(uuid::Version::Random));
        assert_eq!(a.get_variant(), uuid::Variant::RFC4122);
        assert_ne!(a.to_string(), b.to_str().unwrap());
    }

    #[test]
    fn depth_counts_containers_outside_strings() {
        assert!(!exceeds_depth(br#"{"a":[1,{"b":2}]}"#, 3));
        assert!(exceeds_depth(br#"{"a":[1,{"b":[2]}]}"#, 3));
        assert!(!exceeds_depth(br#"{"a":"[[[[[[{{{{"}"#, 1));
        assert!(!exceeds_depth(br#"{"a":"\"[[[["}"#, 1));
        assert!(exceeds_depth(&[b'['; 65], 64));
        assert!(!exceeds_depth(&[b'['; 64], 64));
        assert!(!exceeds_depth(b"", 1));
        assert!(exceeds_depth(br#"{"a\\":[[{"#, 3), "an escaped backslash ends at the quote");
        assert!(!exceeds_depth(br#"{"a\"[[[{"#, 3), "an escaped quote does not end the string");
        assert!(!exceeds_depth(br#"{"\"#, 1), "a trailing backslash");
        assert!(exceeds_depth(br#"]]]][[["#, 2), "closing brackets never go below zero");
    }

    /// The byte-by-byte scan `exceeds_depth` replaced: both must agree on any input.
    fn reference(json: &[u8], limit: usize) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in json {
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    if depth > limit {
                        return true;
                    }
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        false
    }

    #[test]
    fn depth_scan_agrees_with_the_byte_by_byte_scan() {
        let alphabet = br#"{}[]"\a:,"#;
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let len = rng.usize(0..40);
            let json: Vec<u8> = (0..len).map(|_| alphabet[rng.usize(..alphabet.len())]).collect();
            for limit in 0..5 {
                assert_eq!(exceeds_depth(&json, limit), reference(&json, limit), "{}", String::from_utf8_lossy(&json));
            }
        }
    }
}
