//! Telemetry: logs (text or JSON), OpenTelemetry traces and metrics over OTLP/HTTP, and the
//! Prometheus metrics behind `/metrics`.
//!
//! Off by default and then free: without an OTLP endpoint no OpenTelemetry layer is
//! installed, and with text logs the request path opens no spans at all. [`init`] runs
//! before the Tokio runtime exists (the exporter's HTTP client must not need one), and
//! [`Telemetry::shutdown`] flushes after the runtime is gone.
//!
//! - [`otel`]: exporters, providers, W3C trace context in and out.
//! - [`metrics`]: the metrics facade (pre-registered handles).
//! - [`observe`]: adapters' events (ejections, retries, CLI exits) as metrics.
//! - [`request`]: the span, metrics and outcome of one MCP request.
//! - [`records`]: one record per call, handed to a writer off the request path: the per-call
//!   log line, the console's recent calls, the audit trail.
//! - [`line`]: call lines and audit lines written by hand into one buffer per batch.
//! - [`audit`]: the hash-chained audit trail of call records, and its verification.
//! - [`recent`]: the last calls of this replica, kept only while the operator console is on.
//! - [`series`]: per-tool rate, errors and latency over minutes, from the counters above.

pub mod audit;
pub mod line;
pub mod metrics;
pub mod observe;
pub mod otel;
pub mod recent;
pub mod records;
pub mod request;
pub mod series;

use opentelemetry::trace::TracerProvider as _;
use tracing::Level;
use tracing_subscriber::filter::{EnvFilter, FilterExt as _, FilterFn};
use tracing_subscriber::prelude::*;

use crate::config::{LogFormat, TelemetryConfig};

/// Name of the per-HTTP-request span (request id, for log lines); never exported, since the
/// MCP request span is the server span the conventions define.
pub const HTTP_SPAN: &str = "http.request";

/// The request id header (set on every request by the HTTP layers, echoed in the answer).
pub const REQUEST_ID_HEADER: axum::http::HeaderName = axum::http::HeaderName::from_static("x-request-id");

/// The request's `x-request-id` as a call record holds it (`None` when it is not visible
/// ASCII).
pub fn request_id(headers: &axum::http::HeaderMap) -> Option<records::Text> {
    headers.get(REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()).map(records::Text::new)
}

/// The spans the runtime opens per request (when spans are on).
const REQUEST_SPANS: [&str; 3] = [HTTP_SPAN, "mcp.request", "adapter.call"];

/// What the request path should do, decided once from the configuration.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags {
    /// Open request spans (OpenTelemetry on, or JSON logs that show them).
    pub spans: bool,
    /// OpenTelemetry traces are exported: set parents, propagate the adapter span.
    pub otel_traces: bool,
}

impl Flags {
    /// From `[telemetry]`.
    pub fn new(config: &TelemetryConfig) -> Self {
        let otel_traces = config.otlp.as_ref().is_some_and(|o| o.traces_endpoint.is_some());
        Self { spans: otel_traces || config.log_format == LogFormat::Json, otel_traces }
    }

    /// True when OTLP metric export is on.
    pub fn otel_metrics(config: &TelemetryConfig) -> bool {
        config.otlp.as_ref().is_some_and(|o| o.metrics_endpoint.is_some())
    }
}

/// Owns the OpenTelemetry providers until the process ends.
#[derive(Debug)]
pub struct Telemetry {
    providers: Option<otel::Providers>,
}

/// Installs the global subscriber: logs on stderr filtered by `RUST_LOG` (default `info`),
/// plus, when configured, the OpenTelemetry layer with its own filter, so quieter logs do
/// not thin out traces. Call before building the Tokio runtime.
pub fn init(config: &TelemetryConfig) -> anyhow::Result<Telemetry> {
    let providers = config.otlp.as_ref().map(otel::build).transpose()?;
    let logs = match config.log_format {
        // Text: `RUST_LOG` alone decides, so a quiet level formats no request spans at all.
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_ansi(colours())
            .with_writer(std::io::stderr)
            .with_filter(env_filter())
            .boxed(),
        // JSON: the request spans stay visible whatever `RUST_LOG` says, so even a WARN line
        // names its request id, method and trace id.
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(false)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .with_filter(env_filter().or(FilterFn::new(|m| m.is_span() && REQUEST_SPANS.contains(&m.name()))))
            .boxed(),
    };
    let traces = providers.as_ref().and_then(|p| p.tracer.as_ref()).map(|provider| {
        // Spans at INFO and above except the HTTP span; events at WARN and above become span
        // events. A metadata-only filter, so its answer is cached per call site.
        let filter = FilterFn::new(|m| {
            if m.is_span() { *m.level() <= Level::INFO && m.name() != HTTP_SPAN } else { *m.level() <= Level::WARN }
        });
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("mcp-runtime"))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_level(false)
            .with_filter(filter)
    });
    tracing_subscriber::registry().with(logs).with(traces).try_init()?;
    if let Some(meter) = providers.as_ref().and_then(|p| p.meter.clone()) {
        opentelemetry::global::set_meter_provider(meter);
    }
    Ok(Telemetry { providers })
}

/// Plain text logs only (the `check` command).
pub fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(env_filter())
        .with_ansi(colours())
        .with_writer(std::io::stderr)
        .try_init();
}

/// `RUST_LOG` (default `info`), with the tool search library's bookkeeping (`tantivy` logs
/// each index commit at INFO) at WARN unless `RUST_LOG` names it.
fn env_filter() -> EnvFilter {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    if std::env::var("RUST_LOG").is_ok_and(|v| v.contains("tantivy")) {
        return filter;
    }
    filter.add_directive("tantivy=warn".parse().expect("a valid directive"))
}

/// ANSI colours only on a terminal: `docker logs`, `kubectl logs` and files get plain text.
fn colours() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal()
}

impl Telemetry {
    /// Flushes and stops the exporters. Call after the Tokio runtime was dropped.
    pub fn shutdown(self) {
        let Some(p) = self.providers else { return };
        if let Some(t) = p.tracer
            && let Err(e) = t.shutdown()
        {
            eprintln!("mcp-runtime: flushing traces failed: {e}");
        }
        if let Some(m) = p.meter
            && let Err(e) = m.shutdown()
        {
            eprintln!("mcp-runtime: flushing metrics failed: {e}");
        }
        if let Some(l) = p.logger
            && let Err(e) = l.shutdown()
        {
            eprintln!("mcp-runtime: flushing the audit trail's log records failed: {e}");
        }
    }
}
