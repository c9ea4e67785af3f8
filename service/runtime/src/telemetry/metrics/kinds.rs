//! What the metrics facade counts: the `outcome` label, the handle types the request path
//! bumps, and each series' help text.

use std::sync::Arc;

use metrics::{Counter, Histogram, KeyName, Recorder as _, SharedString, Unit};
use metrics_exporter_prometheus::PrometheusRecorder;

/// How one MCP request ended (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A complete result.
    Ok,
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// `resultType: "input_required"` (an MRTR round).
    InputRequired,
    /// A JSON-RPC error.
    Error,
    /// The call was dropped before it answered (client gone, shutdown deadline).
    Cancelled,
}

impl Outcome {
    pub(super) const ALL: [Self; 5] = [Self::Ok, Self::ToolError, Self::InputRequired, Self::Error, Self::Cancelled];

    /// Label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::InputRequired => "input_required",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
        }
    }

    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// Handles for one `(method, tool)` pair, one per outcome.
#[derive(Debug)]
pub struct RequestHandles {
    pub(super) count: [Counter; 5],
    pub(super) latency: [Histogram; 5],
    /// MRTR rounds answered with `input_required`.
    pub(super) input_required: Counter,
    /// The adapter behind the tool, when known.
    pub adapter: Option<Arc<AdapterHandles>>,
    /// `gen_ai.tool.name` for OpenTelemetry metrics (`None`: not a known tool).
    pub(super) tool: Option<Arc<str>>,
    pub(super) method: &'static str,
}

impl RequestHandles {
    /// The method these handles count.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The tool these handles count, when it is a known one (shared, not copied).
    pub fn tool(&self) -> Option<&Arc<str>> {
        self.tool.as_ref()
    }
}

/// Latency of one adapter's calls.
#[derive(Debug)]
pub struct AdapterHandles {
    pub(super) ok: Histogram,
    pub(super) error: Histogram,
    pub(super) name: Arc<str>,
    pub(super) upstream: Option<Arc<str>>,
}

impl AdapterHandles {
    /// Where the adapter's calls go (its backends as the console names them: base URLs, a
    /// command line; never a credential), for call records.
    pub fn upstream(&self) -> Option<Arc<str>> {
        self.upstream.clone()
    }

    /// The adapter's configured name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same, shared.
    pub fn name_arc(&self) -> Arc<str> {
        Arc::clone(&self.name)
    }
}

/// The longest upstream label a call record carries (a long command line is cut).
const MAX_UPSTREAM: usize = 200;

/// An adapter's backends as one label: their targets, comma-separated (`None`: in-process).
pub(super) fn upstream_of(status: &mcp_adapter_api::Status) -> Option<Arc<str>> {
    let mut label = String::new();
    for b in &status.backends {
        if !label.is_empty() {
            label.push_str(", ");
        }
        label.push_str(&b.target);
    }
    if label.len() > MAX_UPSTREAM {
        let mut end = MAX_UPSTREAM;
        while !label.is_char_boundary(end) {
            end -= 1;
        }
        label.truncate(end);
        label.push('…');
    }
    (!label.is_empty()).then(|| Arc::from(label))
}

/// Hit/miss counters of one cache, for the cache layer to bump.
#[derive(Debug, Clone)]
pub struct CacheCounters {
    pub(super) hits: Counter,
    pub(super) misses: Counter,
}

impl CacheCounters {
    /// A lookup answered from the cache.
    pub fn hit(&self) {
        self.hits.increment(1);
    }

    /// A lookup that had to go to the backend.
    pub fn miss(&self) {
        self.misses.increment(1);
    }
}

/// The help text and unit of each series registered by [`super::Metrics`].
pub(super) fn describe(r: &PrometheusRecorder) {
    let text = |name: &'static str, unit: Option<Unit>, help: &'static str| {
        (KeyName::from(name), unit, SharedString::from(help))
    };
    for (name, unit, help) in [
        text("mcp_server_requests_total", None, "MCP requests handled, by method, tool and outcome"),
        text("mcp_mrtr_input_required_total", None, "MRTR rounds: answers with resultType input_required"),
        text("mcp_server_rejected_total", None, "Requests refused before dispatch, by reason"),
        text("mcp_cache_requests_total", None, "Cache lookups, by cache and hit/miss"),
        text("mcp_rate_limited_total", None, "Requests refused by a rate limit"),
        text(
            "mcp_call_records_dropped_total",
            None,
            "Call records dropped because their writer fell behind (log line, console, audit trail)",
        ),
        text(
            "mcp_definitions_unpinned",
            None,
            "Definitions of mcp and openapi adapters that differ from their pin or have none ([pinning]), by adapter and whether they are withheld",
        ),
        text("mcp_user_auth_connected_total", None, "Callers who connected an upstream account, by upstream"),
        text(
            "mcp_user_auth_refused_total",
            None,
            "Connection steps refused (a bad or replayed link or state, another person, a refused code), by reason",
        ),
        text("mcp_user_auth_refreshed_total", None, "Refreshes of callers' upstream tokens, by upstream and outcome"),
        text(
            "mcp_user_auth_disconnected_total",
            None,
            "Connections removed, by upstream and by whom (caller, admin, upstream: it refused the token)",
        ),
        text(
            "mcp_config_reloads_total",
            None,
            "Configuration reloads, by outcome (ok, error: the previous one keeps serving)",
        ),
    ] {
        r.describe_counter(name, unit, help);
    }
    for (name, unit, help) in [
        text("mcp_server_request_duration_seconds", Some(Unit::Seconds), "MCP request latency until the final message"),
        text("mcp_adapter_call_duration_seconds", Some(Unit::Seconds), "Time spent in the adapter (backend) per call"),
    ] {
        r.describe_histogram(name, unit, help);
    }
    for (name, unit, help) in [
        text("mcp_server_in_flight_requests", None, "MCP requests in progress, streamed calls included"),
        text("mcp_server_listen_streams", None, "Open subscriptions/listen streams"),
        text("mcp_build_info", None, "Build information"),
    ] {
        r.describe_gauge(name, unit, help);
    }
}
