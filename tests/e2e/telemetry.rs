//! Telemetry against the real binary: a real OTLP/HTTP receiver on loopback decodes the
//! protobuf the runtime exports (span tree, MCP semantic-convention attributes, `_meta`
//! trace context, flush on SIGTERM); `/metrics` is scraped and parsed as Prometheus text;
//! the probes answer; JSON logs carry the trace id.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use mcp_e2e::wait::{eventually, until};
use mcp_e2e::{FIXTURES_CONFIG, Server};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message as _;
use serde_json::json;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";
const HEADER_TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_PARENT_ID: &str = "b7ad6b7169203331";

/// What the receiver got: spans and metric names.
#[derive(Default)]
struct Received {
    spans: Mutex<Vec<Span>>,
    metrics: Mutex<Vec<String>>,
}

/// A minimal OTLP/HTTP (protobuf) receiver on a free loopback port.
async fn collector() -> (Arc<Received>, SocketAddr) {
    async fn traces(State(r): State<Arc<Received>>, body: Bytes) -> &'static [u8] {
        let req = ExportTraceServiceRequest::decode(body).expect("OTLP trace protobuf");
        let mut spans = r.spans.lock().unwrap();
        for rs in req.resource_spans {
            let service = rs.resource.iter().flat_map(|r| &r.attributes).find(|a| a.key == "service.name");
            assert!(service.is_some(), "every export names its service");
            for ss in rs.scope_spans {
                spans.extend(ss.spans);
            }
        }
        b""
    }
    async fn metrics(State(r): State<Arc<Received>>, body: Bytes) -> &'static [u8] {
        let req = ExportMetricsServiceRequest::decode(body).expect("OTLP metrics protobuf");
        let mut names = r.metrics.lock().unwrap();
        for rm in req.resource_metrics {
            for sm in rm.scope_metrics {
                names.extend(sm.metrics.into_iter().map(|m| m.name));
            }
        }
        b""
    }
    let received = Arc::new(Received::default());
    let app = Router::new()
        .route("/v1/traces", post(traces))
        .route("/v1/metrics", post(metrics))
        .with_state(Arc::clone(&received));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (received, addr)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attr(span: &Span, key: &str) -> Option<String> {
    let v = span.attributes.iter().find(|a| a.key == key)?.value.as_ref()?.value.as_ref()?;
    Some(match v {
        AnyValue::StringValue(s) => s.clone(),
        AnyValue::IntValue(i) => i.to_string(),
        AnyValue::BoolValue(b) => b.to_string(),
        AnyValue::DoubleValue(d) => d.to_string(),
        other => format!("{other:?}"),
    })
}

/// Waits until a span named `name` arrived.
async fn span_named(r: &Received, name: &str) -> Span {
    let missing = || {
        let names: Vec<String> = r.spans.lock().unwrap().iter().map(|s| s.name.clone()).collect();
        format!("no span named {name:?} within 10 s; got {names:?}")
    };
    eventually(Duration::from_secs(10), missing, || {
        std::future::ready(r.spans.lock().unwrap().iter().find(|s| s.name == name).cloned())
    })
    .await
}

fn otel_env(addr: SocketAddr, batch_delay_ms: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")),
        ("OTEL_BSP_SCHEDULE_DELAY", batch_delay_ms.to_owned()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "300".to_owned()),
        ("OTEL_SERVICE_NAME", "mcp-e2e".to_owned()),
    ]
}

fn start_with(config: &str, env: &[(&'static str, String)]) -> Server {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start_with(config, &env)
}

#[tokio::test]
async fn tools_call_span_follows_the_meta_traceparent() {
    let (received, addr) = collector().await;
    let server = start_with(FIXTURES_CONFIG, &otel_env(addr, "100"));
    let mcp = server.mcp();

    // `_meta` carries one trace context and the HTTP headers another: `_meta` wins (SEP-414),
    // the transport context becomes a link.
    let body = mcp.body(
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": {
            "traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01"),
            "tracestate": "rojo=00f067aa0ba902b7",
            "baggage": "user=alice",
        }}),
    );
    let header = format!("00-{HEADER_TRACE_ID}-{HEADER_PARENT_ID}-01");
    let a = mcp.send(&body, &[("traceparent", Some(&header))]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.result()["content"][0]["text"], "hi");

    let server_span = span_named(&received, "tools/call echo").await;
    assert_eq!(hex(&server_span.trace_id), TRACE_ID, "same trace as the caller");
    assert_eq!(hex(&server_span.parent_span_id), PARENT_ID, "the caller's span is the parent");
    assert_eq!(server_span.kind, SpanKind::Server as i32);
    for (key, want) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2026-07-28"),
        ("jsonrpc.request.id", &body["id"].to_string()),
        ("network.transport", "tcp"),
        ("network.protocol.name", "http"),
    ] {
        assert_eq!(attr(&server_span, key).as_deref(), Some(want), "{key}");
    }
    assert_eq!(attr(&server_span, "mcp.session.id"), None, "stateless: no session id");
    assert_eq!(attr(&server_span, "error.type"), None);
    let link = server_span.links.first().expect("the HTTP trace context is linked");
    assert_eq!((hex(&link.trace_id), hex(&link.span_id)), (HEADER_TRACE_ID.to_owned(), HEADER_PARENT_ID.to_owned()));

    let adapter_span = span_named(&received, "adapter demo").await;
    assert_eq!(hex(&adapter_span.trace_id), TRACE_ID);
    assert_eq!(adapter_span.parent_span_id, server_span.span_id, "the adapter call is a child of the request");
    assert_eq!(attr(&adapter_span, "mcp.adapter.name").as_deref(), Some("demo"));

    // The adapter gets the adapter span's context for its upstreams (the REST adapter sends
    // it as headers), with the caller's tracestate and baggage.
    let body = mcp.body(
        "tools/call",
        json!({"name": "trace_headers", "arguments": {}, "_meta": {
            "traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01"),
            "tracestate": "rojo=00f067aa0ba902b7",
            "baggage": "user=alice",
        }}),
    );
    let sent = mcp.send(&body, &[]).await.result()["structuredContent"].clone();
    let tp = sent["traceparent"].as_str().expect("traceparent for upstreams");
    let faults_span = span_named(&received, "adapter faults").await;
    assert_eq!(
        tp,
        format!("00-{TRACE_ID}-{}-01", hex(&faults_span.span_id)),
        "the adapter span is the upstream's parent"
    );
    assert_eq!(sent["tracestate"], "rojo=00f067aa0ba902b7");
    assert_eq!(sent["baggage"], "user=alice");

    // A tool that fails: error.type tool_error and an error status.
    let a = mcp.tool("fail_backend", json!({})).await;
    assert_eq!(a.result()["isError"], true);
    let failed = span_named(&received, "tools/call fail_backend").await;
    assert_eq!(attr(&failed, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(failed.status.as_ref().map(|s| s.code), Some(2), "status ERROR");

    // A JSON-RPC error: error.type and rpc.response.status_code are the code.
    let a = mcp.tool("no_such_tool", json!({})).await;
    assert_eq!(a.error_code(), Some(-32602));
    let unknown = span_named(&received, "tools/call").await;
    assert_eq!(attr(&unknown, "error.type").as_deref(), Some("-32602"));
    assert_eq!(attr(&unknown, "rpc.response.status_code").as_deref(), Some("-32602"));
    assert_eq!(attr(&unknown, "gen_ai.tool.name").as_deref(), Some("no_such_tool"), "attribute, not span name");

    // No `_meta` context: the HTTP headers' context is the parent.
    let body = mcp.body("resources/read", json!({"uri": "test://static-text"}));
    mcp.send(&body, &[("traceparent", Some(&header))]).await;
    let read = span_named(&received, "resources/read").await;
    assert_eq!(hex(&read.trace_id), HEADER_TRACE_ID);
    assert_eq!(hex(&read.parent_span_id), HEADER_PARENT_ID);
    assert_eq!(attr(&read, "mcp.resource.uri").as_deref(), Some("test://static-text"));

    // Metrics go over OTLP too, under the semantic-convention name.
    until(
        Duration::from_secs(5),
        || format!("no mcp.server.operation.duration metric exported: {:?}", received.metrics.lock().unwrap()),
        || received.metrics.lock().unwrap().iter().any(|m| m == "mcp.server.operation.duration"),
    )
    .await;
}

#[tokio::test]
async fn without_opentelemetry_the_caller_context_is_forwarded_unchanged() {
    let server = Server::start(FIXTURES_CONFIG);
    let mcp = server.mcp();
    let tp = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let a =
        mcp.call("tools/call", json!({"name": "trace_headers", "arguments": {}, "_meta": {"traceparent": tp}})).await;
    assert_eq!(a.result()["structuredContent"], json!({"traceparent": tp}));
    let body = mcp.body("tools/call", json!({"name": "trace_headers", "arguments": {}}));
    let header = format!("00-{HEADER_TRACE_ID}-{HEADER_PARENT_ID}-01");
    let a = mcp.send(&body, &[("traceparent", Some(&header))]).await;
    assert_eq!(a.result()["structuredContent"], json!({"traceparent": header}), "from the headers when _meta has none");
    let a = mcp.tool("trace_headers", json!({})).await;
    assert_eq!(a.result()["structuredContent"], json!({}), "nothing to forward");
}

#[tokio::test]
async fn spans_are_flushed_when_the_process_stops() {
    let (received, addr) = collector().await;
    // A batch delay far longer than the test: only the shutdown flush can deliver the span.
    let mut server = start_with(FIXTURES_CONFIG, &otel_env(addr, "600000"));
    let a = server.mcp().tool("echo", json!({"text": "bye"})).await;
    assert_eq!(a.status, 200);
    server.signal("TERM");
    let status = server.wait_exit(Duration::from_secs(15)).expect("exits after SIGTERM");
    assert!(status.success(), "exit status {status:?}; stderr:\n{}", server.stderr());
    span_named(&received, "tools/call echo").await;
}

/// Scrapes `url` and parses the Prometheus text format.
async fn scrape(url: &str) -> prometheus_parse::Scrape {
    let res = reqwest::get(url).await.expect("GET /metrics");
    assert_eq!(res.status(), 200);
    let ct = res.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    let text = res.text().await.unwrap();
    prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text")
}

/// The value of the sample `name` whose labels include `labels` (0 when absent).
fn value(s: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == name && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match &x.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => *v,
            prometheus_parse::Value::Histogram(_) | prometheus_parse::Value::Summary(_) => 0.0,
        })
        .sum()
}

fn base(server: &Server) -> String {
    format!("http://{}", server.addr)
}

#[tokio::test]
async fn metrics_move_as_calls_are_made() {
    let server = Server::start(FIXTURES_CONFIG);
    let mcp = server.mcp();
    let url = format!("{}/metrics", base(&server));
    let echo_ok = [("method", "tools/call"), ("tool", "echo"), ("outcome", "ok")];

    let before = scrape(&url).await;
    assert!(
        !before.samples.iter().any(|s| s.labels.get("tool") == Some("echo")),
        "a tool's series appear on its first call, not before"
    );
    assert_eq!(value(&before, "mcp_build_info", &[]), 1.0);
    for i in 0..3 {
        assert_eq!(mcp.tool("echo", json!({"text": format!("n{i}")})).await.status, 200);
    }
    mcp.tool("fail_backend", json!({})).await;
    mcp.tool("nope_not_a_tool", json!({})).await;
    mcp.call("tools/list", json!({})).await;
    let body = mcp.body("tools/list", json!({}));
    assert_eq!(mcp.send(&body, &[("host", Some("evil.example"))]).await.status, 403);

    let after = scrape(&url).await;
    assert_eq!(value(&after, "mcp_server_requests_total", &echo_ok), 3.0);
    assert_eq!(value(&after, "mcp_server_request_duration_seconds_count", &echo_ok), 3.0);
    assert_eq!(value(&after, "mcp_server_requests_total", &[("tool", "fail_backend"), ("outcome", "tool_error")]), 1.0);
    assert_eq!(value(&after, "mcp_server_requests_total", &[("method", "tools/list"), ("outcome", "ok")]), 1.0);
    assert_eq!(
        value(&after, "mcp_server_requests_total", &[("method", "tools/call"), ("tool", ""), ("outcome", "error")]),
        1.0,
        "unknown tools count under an empty tool label"
    );
    assert!(
        !after.samples.iter().any(|s| s.labels.get("tool") == Some("nope_not_a_tool")),
        "no series per unknown name"
    );
    assert_eq!(
        value(&after, "mcp_adapter_call_duration_seconds_count", &[("adapter", "demo"), ("outcome", "ok")]),
        3.0
    );
    assert_eq!(value(&after, "mcp_server_rejected_total", &[("reason", "forbidden")]), 1.0);
    assert_eq!(value(&after, "mcp_server_in_flight_requests", &[]), 0.0);
    assert!(after.docs.contains_key("mcp_server_requests_total"), "HELP text present");

    // MRTR rounds: a tool that asks for input.
    let a = mcp.tool("greet", json!({})).await;
    assert_eq!(a.result()["resultType"], "input_required");
    let s = scrape(&url).await;
    assert_eq!(value(&s, "mcp_mrtr_input_required_total", &[("tool", "greet")]), 1.0);

    // An open listen stream shows in the gauge.
    let mut stream =
        mcp.open_stream("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    stream.next(Duration::from_secs(5)).await.expect("acknowledgement");
    assert_eq!(value(&scrape(&url).await, "mcp_server_listen_streams", &[]), 1.0);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn metrics_can_have_their_own_listener() {
    let port = free_port();
    let config = format!("{FIXTURES_CONFIG}\n[telemetry]\nmetrics_listen = \"127.0.0.1:{port}\"\n");
    let server = Server::start(&config);
    server.mcp().tool("echo", json!({"text": "x"})).await;
    let s = scrape(&format!("http://127.0.0.1:{port}/metrics")).await;
    assert_eq!(value(&s, "mcp_server_requests_total", &[("tool", "echo"), ("outcome", "ok")]), 1.0);
    let main = reqwest::get(format!("{}/metrics", base(&server))).await.unwrap();
    assert_eq!(main.status(), 404, "not on the main listener when it has its own");
    let probe = reqwest::get(format!("http://127.0.0.1:{port}/readyz")).await.unwrap();
    assert_eq!(probe.status(), 200);
}

#[tokio::test]
async fn probes_answer_without_the_host_check() {
    let server = Server::start(FIXTURES_CONFIG);
    let http = reqwest::Client::new();
    let res = http.get(format!("{}/healthz", base(&server))).header("host", "evil.example").send().await.unwrap();
    assert_eq!((res.status().as_u16(), res.text().await.unwrap().as_str()), (200, "ok"));
    let res = http.get(format!("{}/readyz", base(&server))).header("host", "evil.example").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "ready");
    assert_eq!(body["checks"]["adapters"], "ok");
}

#[tokio::test]
async fn json_logs_carry_the_trace_id() {
    let config = format!("{FIXTURES_CONFIG}\n[telemetry]\nlog_format = \"json\"\n");
    let server = Server::start(&config);
    let mcp = server.mcp();
    let body = mcp.body(
        "tools/call",
        json!({"name": "fail_internal", "arguments": {}, "_meta": {"traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01")}}),
    );
    let a = mcp.send(&body, &[("x-request-id", Some("req-42"))]).await;
    assert_eq!(a.error_code(), Some(-32603));
    let line = server.log_line("internal error").await;
    let log: serde_json::Value = serde_json::from_str(&line).expect("one JSON object per line");
    let spans = log["spans"].as_array().expect("span list");
    assert!(spans.iter().any(|s| s["trace_id"] == TRACE_ID), "{line}");
    assert!(spans.iter().any(|s| s["request_id"] == "req-42"), "{line}");
    assert!(spans.iter().any(|s| s["mcp.method.name"] == "tools/call"), "{line}");
    // The call's own line (written off the request path, outside its spans) names them too.
    let line = server.log_line("\"target\":\"mcp_runtime::call\"").await;
    let call: serde_json::Value = serde_json::from_str(&line).expect("one JSON object per line");
    assert_eq!(call["level"], "INFO", "{line}");
    assert_eq!(call["fields"]["message"], "call", "{line}");
    assert_eq!(call["fields"]["name"], "fail_internal", "{line}");
    assert_eq!(call["fields"]["trace_id"], TRACE_ID, "{line}");
    assert_eq!(call["fields"]["request_id"], "req-42", "{line}");
    assert!(call["fields"]["duration_ms"].is_f64(), "{line}");
}
