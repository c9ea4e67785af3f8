//! One MCP request as telemetry sees it: the server span named `{mcp.method.name} {target}`
//! with the MCP semantic-convention attributes and the `_meta` trace context as parent
//! (SEP-414; the HTTP headers' context as a link, or as parent when `_meta` has none), its
//! metric handles, and its outcome. Recorded once, when the last holder is done: the
//! handler, or the call itself when it outlives the handler as an SSE stream; a call
//! (`tools/call`, `prompts/get`, `resources/read`) then hands one [`CallRecord`] to the
//! writer off the request path (the log line, the console, the audit trail).
//!
//! One file past 400 lines: a scope's start, its outcome setters and its drop (where the
//! record is made) are one lifecycle over one struct.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use mcp_protocol::RequestId;
use opentelemetry::trace::TraceContextExt as _;
use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::Flags;
use super::metrics::{AdapterHandles, Metrics, Outcome, RequestHandles};
use super::otel;
use super::records::{CallRecord, Records, Text, digest, digest_json};
use crate::registry::Registry;
use crate::rpc::{Envelope, Kind, Request, RpcError};

pub use super::records::CALL_LOG;

/// The telemetry of one request; cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct Scope(Arc<Inner>);

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").field("method", &self.0.handles.method()).finish()
    }
}

struct Inner {
    metrics: Arc<Metrics>,
    flags: Flags,
    handles: Arc<RequestHandles>,
    adapter: Option<Arc<AdapterHandles>>,
    /// `mcp.protocol.version`, kept only for OpenTelemetry metrics.
    version: String,
    start: Instant,
    span: Span,
    /// Trace context to forward as-is when OpenTelemetry is off (W3C: a non-participating
    /// hop passes `traceparent` on unchanged).
    passthrough: Vec<(&'static str, String)>,
    /// Present for a call when call records are on (a log line, the console or the audit).
    call: Option<Draft>,
    /// The MRTR round, as [`Scope::set_round`] learns it from the sealed state.
    round: AtomicU32,
    result: Mutex<Recorded>,
}

/// The record of a call while it runs: what the request already held.
struct Draft {
    records: Arc<Records>,
    name: Arc<str>,
    endpoint: Option<Arc<str>>,
    caller: Option<Arc<str>>,
    client: Option<Text>,
    request_id: Option<Text>,
    arguments: Option<Value>,
    arguments_digest: Option<[u8; 32]>,
}

struct Recorded {
    outcome: Outcome,
    /// The outcome as the call line says it (a JSON-RPC error split by who refused).
    said: &'static str,
    /// `error.type` and the status description.
    error: Option<(Cow<'static, str>, Cow<'static, str>)>,
    /// SHA-256 of the answer, when the audit wants it.
    result_digest: Option<[u8; 32]>,
}

/// What the semantic conventions want to know about the request's target.
enum Target<'a> {
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
}

impl Scope {
    /// Starts the request: span (when spans are on), in-flight gauge, handles. `arrived`:
    /// when its head was in, from which it is timed (its duration, the call record's).
    // The request's parts and where its telemetry goes, each from a different owner.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        metrics: &Arc<Metrics>,
        flags: Flags,
        registry: &Registry,
        request: &Request,
        headers: &HeaderMap,
        caller: Option<&mcp_adapter_api::Identity>,
        records: Option<&Arc<Records>>,
        arrived: Instant,
    ) -> Self {
        let Request { id, method, params, envelope, .. } = request;
        let method = method.name();
        let text = |k: &str| params.get(k).and_then(Value::as_str);
        let target = match method {
            "tools/call" => text("name").map(Target::Tool),
            "prompts/get" => text("name").map(Target::Prompt),
            "resources/read" => text("uri").map(Target::Resource),
            _ => None,
        };
        // Metrics and records name a tool as the catalog does, whatever a virtual endpoint
        // calls it; a tool this registry does not serve is no known tool here.
        let tool = match target {
            Some(Target::Tool(t)) => registry.catalog_name(t),
            _ => None,
        };
        let handles = metrics.for_request(method, tool);
        let adapter = match target {
            Some(Target::Tool(_)) => handles.adapter.clone(),
            Some(Target::Prompt(p)) => registry.prompt(p).and_then(|(_, a)| metrics.for_adapter(a)),
            Some(Target::Resource(u)) => registry.resource(u).and_then(|(a, _)| metrics.for_adapter(a)),
            None => None,
        };
        metrics.in_flight.increment(1.0);
        let span =
            if flags.spans { server_span(registry, method, id, envelope, target.as_ref()) } else { Span::none() };
        let mut passthrough = Vec::new();
        if flags.otel_traces {
            // SEP-414 / MCP semconv: `_meta` is the parent; the transport context is a link.
            match (otel::from_meta(envelope), otel::from_headers(headers)) {
                (Some(meta), http) => {
                    let _ = span.set_parent(meta);
                    if let Some(h) = http {
                        span.add_link(h.span().span_context().clone());
                    }
                }
                (None, Some(http)) => {
                    let _ = span.set_parent(http);
                }
                (None, None) => {}
            }
            let cx = span.context();
            let sc = cx.span().span_context().clone();
            if sc.is_valid() {
                span.record("trace_id", tracing::field::display(sc.trace_id()));
            }
        } else {
            passthrough = incoming(envelope, headers);
            if flags.spans
                && let Some(id) = passthrough.first().and_then(|(_, tp)| otel::trace_id_of(tp))
            {
                span.record("trace_id", id);
            }
        }
        let version = if metrics.otel_enabled() { envelope.protocol_version.clone() } else { String::new() };
        let call = match (target, records) {
            (Some(Target::Tool(n) | Target::Prompt(n) | Target::Resource(n)), Some(records)) => {
                let arguments = params.get("arguments");
                Some(Draft {
                    records: Arc::clone(records),
                    // A known tool's name is shared (its metric handles hold it); others are copied.
                    name: handles.tool().cloned().unwrap_or_else(|| Arc::from(n)),
                    endpoint: registry.endpoint.clone(),
                    caller: caller.map(mcp_adapter_api::Identity::key_arc),
                    // Copied into the record while in cache (records/text.rs says why).
                    client: envelope.client.as_deref().map(Text::new),
                    request_id: super::request_id(headers),
                    arguments: if records.arguments { arguments.cloned() } else { None },
                    arguments_digest: records.audit.then(|| digest_json(arguments.unwrap_or(&Value::Null))),
                })
            }
            _ => None,
        };
        Self(Arc::new(Inner {
            metrics: Arc::clone(metrics),
            flags,
            handles,
            adapter,
            version,
            start: arrived,
            span,
            passthrough,
            call,
            round: AtomicU32::new(0),
            result: Mutex::new(Recorded { outcome: Outcome::Ok, said: "ok", error: None, result_digest: None }),
        }))
    }

    /// The request's server span (disabled when spans are off).
    pub fn span(&self) -> &Span {
        &self.0.span
    }

    /// The request's MRTR round (0: a first request), as its sealed state counts it.
    pub fn set_round(&self, round: u32) {
        self.0.round.store(round, Ordering::Relaxed);
    }

    /// The round [`Self::set_round`] stored.
    pub fn round(&self) -> u32 {
        self.0.round.load(Ordering::Relaxed)
    }

    /// The name of the adapter the request went to, when it names one.
    pub fn adapter_name(&self) -> Option<&str> {
        self.0.adapter.as_ref().map(|a| a.name())
    }

    /// A child span for the adapter call and the trace headers an upstream should get: the
    /// adapter span's context when OpenTelemetry is on, the caller's context unchanged when off.
    pub fn adapter_call(&self) -> (Span, Vec<(&'static str, String)>) {
        let flags = self.0.flags;
        if !flags.spans {
            return (Span::none(), self.0.passthrough.clone());
        }
        let adapter = self.0.adapter.as_ref().map_or("adapter", |a| a.name());
        let span = tracing::info_span!(
            parent: &self.0.span,
            "adapter.call",
            "otel.name" = %format_args!("adapter {adapter}"),
            "otel.kind" = "internal",
            "mcp.adapter.name" = adapter,
        );
        if flags.otel_traces {
            let propagation = otel::inject(&span.context());
            (span, propagation)
        } else {
            (span, self.0.passthrough.clone())
        }
    }

    /// The call ran and answered: until then a dropped call counts as cancelled.
    pub fn expect_call(&self) {
        self.set(Outcome::Cancelled, Some(("cancelled".into(), "the call was dropped before it answered".into())));
    }

    /// A complete result; `tool_error` is the result when a tool answered `isError: true`
    /// (its first text, cut short, is the reason: an upstream's `HTTP 404 Not Found: ...`).
    pub fn completed(&self, tool_error: Option<&mcp_protocol::CallToolResult>) {
        match tool_error {
            Some(r) => {
                let text = r.content.iter().find_map(|c| match c {
                    mcp_protocol::ContentBlock::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                });
                let reason = match text {
                    Some(t) if t.chars().count() > 200 => format!("{}...", t.chars().take(200).collect::<String>()),
                    Some(t) => t.to_owned(),
                    None => "the tool reported an error".to_owned(),
                };
                self.set(Outcome::ToolError, Some(("tool_error".into(), reason.into())));
            }
            None => self.set(Outcome::Ok, None),
        }
    }

    /// An MRTR round: the answer asks for input.
    pub fn input_required(&self) {
        self.set(Outcome::InputRequired, None);
    }

    /// A JSON-RPC error answer.
    pub fn failed(&self, e: &RpcError) {
        let (_, code) = e.kind.wire();
        self.set(Outcome::Error, Some((code.code().to_string().into(), e.message.clone().into())));
        let said = match e.kind {
            Kind::Unauthorized | Kind::Forbidden => "denied",
            Kind::RateLimited => "rate_limited",
            _ => "protocol_error",
        };
        self.0.result.lock().expect("scope lock").said = said;
    }

    /// Whether the audit wants the answer's digest ([`Scope::answered`]).
    pub fn wants_result_digest(&self) -> bool {
        self.0.call.as_ref().is_some_and(|c| c.records.audit)
    }

    /// The answer's body, for its digest in the audit trail.
    pub fn answered(&self, body: &[u8]) {
        if self.wants_result_digest() {
            self.0.result.lock().expect("scope lock").result_digest = Some(digest(body));
        }
    }

    /// The adapter returned after `elapsed`.
    pub fn adapter_finished(&self, elapsed: Duration, ok: bool) {
        if let Some(a) = &self.0.adapter {
            self.0.metrics.adapter_done(a, ok, elapsed);
        }
    }

    fn set(&self, outcome: Outcome, error: Option<(Cow<'static, str>, Cow<'static, str>)>) {
        let mut r = self.0.result.lock().expect("scope lock");
        r.outcome = outcome;
        r.said = outcome.as_str();
        r.error = error;
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let r = self.result.get_mut().expect("scope lock");
        let metrics = &self.metrics;
        let error_type = r.error.as_ref().map(|(t, _)| &**t);
        let finished = Instant::now();
        let elapsed = finished.saturating_duration_since(self.start);
        metrics.request_done(&self.handles, r.outcome, elapsed, &self.version, error_type);
        metrics.in_flight.decrement(1.0);
        if let Some(c) = self.call.take() {
            let trace_id = self.span.context().span().span_context().clone();
            let trace_id = if trace_id.is_valid() {
                Some(Arc::from(trace_id.trace_id().to_string()))
            } else {
                self.passthrough.first().and_then(|(_, tp)| otel::trace_id_of(tp)).map(Arc::from)
            };
            c.records.submit(CallRecord {
                at_ms: 0,
                finished,
                method: self.handles.method(),
                name: c.name,
                endpoint: c.endpoint,
                caller: c.caller,
                client: c.client,
                outcome: r.said,
                error: r.error.as_ref().map(|(_, reason)| reason.clone()),
                duration_us: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
                adapter: self.adapter.as_ref().map(|a| a.name_arc()),
                upstream: self.adapter.as_ref().and_then(|a| a.upstream()),
                request_id: c.request_id,
                trace_id,
                round: *self.round.get_mut(),
                arguments_digest: c.arguments_digest,
                result_digest: r.result_digest,
                arguments: c.arguments,
            });
        }
        if let Some((ty, message)) = &r.error {
            let span = &self.span;
            span.record("error.type", &**ty);
            if r.outcome == Outcome::Error {
                span.record("rpc.response.status_code", &**ty);
            }
            span.record("otel.status_code", "error");
            span.record("otel.status_description", &**message);
        }
    }
}

/// The server span. Its name uses the tool or prompt only when the registry knows it (span
/// names stay low-cardinality whatever clients send); the resource URI is an attribute only.
fn server_span(
    registry: &Registry,
    method: &'static str,
    id: &RequestId,
    envelope: &Envelope,
    target: Option<&Target<'_>>,
) -> Span {
    let known = match target {
        Some(Target::Tool(t)) => registry.tool(t).is_some().then_some(*t),
        Some(Target::Prompt(p)) => registry.prompt(p).is_some().then_some(*p),
        _ => None,
    };
    let span = tracing::info_span!(
        "mcp.request",
        "otel.name" = %format_args!("{method}{}{}", if known.is_some() { " " } else { "" }, known.unwrap_or("")),
        "otel.kind" = "server",
        "mcp.method.name" = method,
        "mcp.protocol.version" = %envelope.protocol_version,
        "jsonrpc.request.id" = %id,
        "gen_ai.operation.name" = Empty,
        "gen_ai.tool.name" = Empty,
        "gen_ai.prompt.name" = Empty,
        "mcp.resource.uri" = Empty,
        "network.transport" = "tcp",
        "network.protocol.name" = "http",
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "trace_id" = Empty,
    );
    match target {
        Some(Target::Tool(t)) => {
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", *t);
        }
        Some(Target::Prompt(p)) => {
            span.record("gen_ai.prompt.name", *p);
        }
        Some(Target::Resource(u)) => {
            span.record("mcp.resource.uri", *u);
        }
        None => {}
    }
    span
}

/// The caller's trace context, `_meta` first (SEP-414), else the HTTP headers.
fn incoming(envelope: &Envelope, headers: &HeaderMap) -> Vec<(&'static str, String)> {
    if let Some(tp) = &envelope.traceparent {
        let mut out = vec![("traceparent", tp.clone())];
        if let Some(ts) = &envelope.tracestate {
            out.push(("tracestate", ts.clone()));
        }
        if let Some(b) = &envelope.baggage {
            out.push(("baggage", b.clone()));
        }
        return out;
    }
    if !headers.contains_key("traceparent") {
        return Vec::new();
    }
    ["traceparent", "tracestate", "baggage"]
        .into_iter()
        .filter_map(|k| Some((k, headers.get(k)?.to_str().ok()?.to_owned())))
        .collect()
}
