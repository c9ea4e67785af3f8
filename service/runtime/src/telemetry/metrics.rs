//! The metrics facade: every metric the runtime exposes, registered once (a tool's series on
//! its first call), so the request path only bumps resolved handles (atomics, no allocation).
//!
//! Stack: the `metrics` crate's handles over `metrics-exporter-prometheus` (default features
//! off: no HTTP listener, no push gateway, no aws-lc) rendered by our own `/metrics` route.
//! A handle is an `Arc` to atomic cells, so a counter bump is one atomic add; histogram
//! samples go to a lock-free bucket drained by the scrape or the upkeep task. When OTLP
//! metric export is on, the semantic-convention histograms (`mcp.server.operation.duration`,
//! adapter duration) are recorded into OpenTelemetry instruments as well; otherwise no
//! OpenTelemetry code runs.
//!
//! Others feed it without knowing the stack: `state.metrics.cache("tool_result").hit()`,
//! `state.metrics.rate_limited("subject")`; adapters through their observer
//! ([`super::observe`]). Each scrape also reads the process figures (`process_*`: RSS, CPU,
//! file descriptors, from `/proc`, by `metrics-process`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use metrics::{Counter, Gauge, Key, Label, Metadata, Recorder as _};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use opentelemetry::KeyValue;

use crate::registry::{NamedAdapter, Registry};

mod kinds;
use kinds::describe;
pub use kinds::{AdapterHandles, CacheCounters, Outcome, RequestHandles};

/// Histogram buckets in seconds: the semantic-convention boundaries for
/// `mcp.server.operation.duration` plus sub-10 ms ones (most calls are fast).
pub const DURATION_BUCKETS: &[f64] =
    &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// Methods whose handles are registered up front; others (extensions) on first use.
const KNOWN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
];

pub(super) static META: Metadata<'static> = Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// OpenTelemetry instruments, present only when OTLP metric export is on.
#[derive(Debug)]
struct Otel {
    operation: opentelemetry::metrics::Histogram<f64>,
    adapter: opentelemetry::metrics::Histogram<f64>,
}

/// Handles that depend on the loaded configuration.
#[derive(Default)]
struct PerLoad {
    tools: HashMap<Box<str>, ToolSlot>,
    adapters: HashMap<usize, Arc<AdapterHandles>>,
}

/// A known tool's series, registered on its first call: a catalog of 5,000 tools neither
/// holds 55,000 idle series in memory (4.4 KB per tool) nor shows them at every scrape.
struct ToolSlot {
    adapter: Arc<AdapterHandles>,
    handles: OnceLock<Arc<RequestHandles>>,
}

/// Every metric of one replica.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    methods: RwLock<HashMap<&'static str, Arc<RequestHandles>>>,
    /// Handles of the current configuration's tools and adapters (swapped on reload).
    per_load: ArcSwap<PerLoad>,
    /// MCP requests being handled, streamed calls included.
    pub in_flight: Gauge,
    /// Open `subscriptions/listen` streams (set from the live count at each scrape).
    pub listen_streams: Gauge,
    rejected: RwLock<HashMap<&'static str, Counter>>,
    /// Configuration reloads: `[ok, error]`.
    reloads: [Counter; 2],
    /// `mcp_redis_up`, registered when a Redis link is first reported (none without Redis).
    redis_up: OnceLock<Gauge>,
    upstreams: super::observe::Upstreams,
    process: metrics_process::Collector,
    otel: Option<Otel>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("tools", &self.per_load.load().tools.len())
            .field("otel", &self.otel.is_some())
            .finish()
    }
}

impl Metrics {
    /// Registers every metric for these adapters' tools. `otel`: also record into the global
    /// OpenTelemetry meter provider (set by [`super::init`] when OTLP metrics are on).
    pub fn new(adapters: &[NamedAdapter], otel: bool) -> Self {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("duration_seconds".into()), DURATION_BUCKETS)
            .expect("static buckets are valid")
            .build_recorder();
        let handle = recorder.handle();
        describe(&recorder);
        super::observe::describe(&recorder);
        let process = metrics_process::Collector::default();
        metrics::with_local_recorder(&recorder, || process.describe());
        let mut m = Self {
            in_flight: recorder.register_gauge(&Key::from_name("mcp_server_in_flight_requests"), &META),
            listen_streams: recorder.register_gauge(&Key::from_name("mcp_server_listen_streams"), &META),
            methods: RwLock::new(HashMap::new()),
            per_load: ArcSwap::default(),
            rejected: RwLock::new(HashMap::new()),
            reloads: ["ok", "error"].map(|outcome| {
                let key = Key::from_parts("mcp_config_reloads_total", vec![Label::new("outcome", outcome)]);
                recorder.register_counter(&key, &META)
            }),
            redis_up: OnceLock::new(),
            upstreams: super::observe::Upstreams::default(),
            process,
            otel: otel.then(|| {
                let meter = opentelemetry::global::meter("mcp-runtime");
                Otel {
                    operation: meter
                        .f64_histogram("mcp.server.operation.duration")
                        .with_unit("s")
                        .with_boundaries(DURATION_BUCKETS.to_vec())
                        .build(),
                    adapter: meter
                        .f64_histogram("mcp.adapter.call.duration")
                        .with_unit("s")
                        .with_boundaries(DURATION_BUCKETS.to_vec())
                        .build(),
                }
            }),
            recorder,
            handle,
        };
        let version = Label::new("version", env!("CARGO_PKG_VERSION"));
        m.recorder.register_gauge(&Key::from_parts("mcp_build_info", vec![version]), &META).set(1.0);
        m.load_tools(adapters);
        let methods: HashMap<_, _> =
            KNOWN_METHODS.iter().map(|&name| (name, Arc::new(m.request_handles(name, None, None)))).collect();
        m.methods = RwLock::new(methods);
        m
    }

    /// Takes a (re)loaded registry's tools and adapters: each adapter's series now, each
    /// tool's on its first call (and then all its outcomes at once, zeros included). Series of
    /// tools that went away stay at their last value; a tool that comes back counts on. Sets
    /// each adapter's count of definitions that are not the pinned ones (`[pinning]`).
    pub fn reload(&self, registry: &Registry) {
        // Series only while pinning is on: a deployment without it has nothing to count.
        let pinning = registry.config().pinning.mode.is_some();
        for NamedAdapter { name, .. } in registry.adapters().iter().filter(|_| pinning) {
            for withheld in [true, false] {
                let labels = vec![Label::new("adapter", name.clone()), Label::new("withheld", withheld.to_string())];
                let n = registry.unpinned.iter().filter(|u| *u.adapter == **name && u.withheld == withheld).count();
                self.recorder.register_gauge(&Key::from_parts("mcp_definitions_unpinned", labels), &META).set(n as f64);
            }
        }
        self.load_tools(registry.adapters());
    }

    fn load_tools(&self, adapters: &[NamedAdapter]) {
        let mut next = PerLoad::default();
        for NamedAdapter { name, adapter, .. } in adapters {
            let handles = Arc::new(self.adapter_handles(name, kinds::upstream_of(&adapter.status())));
            for tool in adapter.catalog().tools {
                let slot = ToolSlot { adapter: Arc::clone(&handles), handles: OnceLock::new() };
                next.tools.insert(tool.tool.name.into(), slot);
            }
            next.adapters.insert(adapter_key(adapter), handles);
        }
        self.per_load.store(Arc::new(next));
    }

    fn request_handles(
        &self,
        method: &'static str,
        tool: Option<&str>,
        adapter: Option<Arc<AdapterHandles>>,
    ) -> RequestHandles {
        let labels = |outcome: Option<Outcome>| {
            let mut l = vec![Label::new("method", method), Label::new("tool", tool.unwrap_or("").to_owned())];
            if let Some(o) = outcome {
                l.push(Label::new("outcome", o.as_str()));
            }
            l
        };
        let r = &self.recorder;
        RequestHandles {
            count: Outcome::ALL
                .map(|o| r.register_counter(&Key::from_parts("mcp_server_requests_total", labels(Some(o))), &META)),
            latency: Outcome::ALL.map(|o| {
                r.register_histogram(&Key::from_parts("mcp_server_request_duration_seconds", labels(Some(o))), &META)
            }),
            input_required: r.register_counter(&Key::from_parts("mcp_mrtr_input_required_total", labels(None)), &META),
            adapter,
            tool: tool.map(Arc::from),
            method,
        }
    }

    fn adapter_handles(&self, name: &str, upstream: Option<Arc<str>>) -> AdapterHandles {
        let key = |outcome: &'static str| {
            Key::from_parts(
                "mcp_adapter_call_duration_seconds",
                vec![Label::new("adapter", name.to_owned()), Label::new("outcome", outcome)],
            )
        };
        AdapterHandles {
            ok: self.recorder.register_histogram(&key("ok"), &META),
            error: self.recorder.register_histogram(&key("error"), &META),
            name: Arc::from(name),
            upstream,
        }
    }

    /// Handles for a request: the tool's for a known `tools/call`, otherwise the method's
    /// (unknown tool names never create series: clients cannot grow the label set).
    pub fn for_request(&self, method: &'static str, tool: Option<&str>) -> Arc<RequestHandles> {
        if let Some(t) = tool {
            let per_load = self.per_load.load();
            if let Some(slot) = per_load.tools.get(t) {
                let register =
                    || Arc::new(self.request_handles("tools/call", Some(t), Some(Arc::clone(&slot.adapter))));
                return Arc::clone(slot.handles.get_or_init(register));
            }
        }
        if let Some(h) = self.methods.read().expect("metrics lock").get(method) {
            return Arc::clone(h);
        }
        let h = Arc::new(self.request_handles(method, None, None));
        self.methods.write().expect("metrics lock").entry(method).or_insert(h).clone()
    }

    /// True when OTLP metric export is on.
    pub fn otel_enabled(&self) -> bool {
        self.otel.is_some()
    }

    /// The latency handles of the adapter instance behind `adapter`.
    pub fn for_adapter(&self, adapter: &Arc<dyn mcp_adapter_api::Adapter>) -> Option<Arc<AdapterHandles>> {
        self.per_load.load().adapters.get(&adapter_key(adapter)).cloned()
    }

    /// Records one finished MCP request. `error_type` is the semantic-convention
    /// `error.type` (JSON-RPC code or `tool_error`).
    pub fn request_done(
        &self,
        h: &RequestHandles,
        outcome: Outcome,
        elapsed: Duration,
        version: &str,
        error_type: Option<&str>,
    ) {
        let secs = elapsed.as_secs_f64();
        h.count[outcome.index()].increment(1);
        h.latency[outcome.index()].record(secs);
        if outcome == Outcome::InputRequired {
            h.input_required.increment(1);
        }
        if let Some(otel) = &self.otel {
            let mut attrs = Vec::with_capacity(5);
            attrs.push(KeyValue::new("mcp.method.name", h.method));
            attrs.push(KeyValue::new("mcp.protocol.version", version.to_owned()));
            attrs.push(KeyValue::new("network.transport", "tcp"));
            if let Some(t) = &h.tool {
                attrs.push(KeyValue::new("gen_ai.tool.name", Arc::clone(t).to_string()));
            }
            if let Some(e) = error_type {
                attrs.push(KeyValue::new("error.type", e.to_owned()));
            }
            otel.operation.record(secs, &attrs);
        }
    }

    /// Records how long an adapter took.
    pub fn adapter_done(&self, h: &AdapterHandles, ok: bool, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        if ok { &h.ok } else { &h.error }.record(secs);
        if let Some(otel) = &self.otel {
            let attrs = [
                KeyValue::new("mcp.adapter.name", h.name.to_string()),
                KeyValue::new("outcome", if ok { "ok" } else { "error" }),
            ];
            otel.adapter.record(secs, &attrs);
        }
    }

    /// A request refused before dispatch (`reason` is an error kind name: `forbidden`,
    /// `payload_too_large`, `overloaded`, `timeout`, ...). Cold path: looked up by name.
    pub fn rejected(&self, reason: &'static str) {
        if let Some(c) = self.rejected.read().expect("metrics lock").get(reason) {
            c.increment(1);
            return;
        }
        let key = Key::from_parts("mcp_server_rejected_total", vec![Label::new("reason", reason)]);
        let counter = self.recorder.register_counter(&key, &META);
        counter.increment(1);
        self.rejected.write().expect("metrics lock").insert(reason, counter);
    }

    /// Adds one to counter `name` with `labels`: for rare events (a user connecting an
    /// upstream account, a refresh), looked up by name each time.
    pub fn count(&self, name: &'static str, labels: &[(&'static str, &str)]) {
        let labels: Vec<Label> = labels.iter().map(|(k, v)| Label::new(*k, (*v).to_owned())).collect();
        self.recorder.register_counter(&Key::from_parts(name, labels), &META).increment(1);
    }

    /// The counter of call records dropped because the writer fell behind.
    pub fn call_records_dropped(&self) -> Counter {
        self.recorder.register_counter(&Key::from_name("mcp_call_records_dropped_total"), &META)
    }

    /// A configuration reload ended: swapped in (`ok`) or rejected, the old one serving on.
    pub fn reloaded(&self, ok: bool) {
        self.reloads[usize::from(!ok)].increment(1);
    }

    /// Counters for one cache (call once at set-up, keep the result).
    pub fn cache(&self, cache: &'static str) -> CacheCounters {
        let key = |result: &'static str| {
            Key::from_parts("mcp_cache_requests_total", vec![Label::new("cache", cache), Label::new("result", result)])
        };
        CacheCounters {
            hits: self.recorder.register_counter(&key("hit"), &META),
            misses: self.recorder.register_counter(&key("miss"), &META),
        }
    }

    /// The rejection counter of one rate limiter (call once at set-up, keep the result, and
    /// `increment(1)` it per refused request).
    pub fn rate_limited(&self, scope: &'static str) -> Counter {
        let key = Key::from_parts("mcp_rate_limited_total", vec![Label::new("scope", scope)]);
        self.recorder.register_counter(&key, &META)
    }

    /// Whether this replica's Redis link is up (set at each scrape when there is a Redis).
    pub fn redis_up(&self, up: bool) {
        let gauge = self.redis_up.get_or_init(|| self.recorder.register_gauge(&Key::from_name("mcp_redis_up"), &META));
        gauge.set(if up { 1.0 } else { 0.0 });
    }

    /// The Prometheus text exposition, with the figures read at scrape time refreshed.
    pub fn render(&self) -> String {
        self.upstreams.refresh();
        metrics::with_local_recorder(&self.recorder, || self.process.collect());
        self.handle.render()
    }

    /// The recorder, for the adapters' observers to register their series.
    pub(super) fn recorder(&self) -> &PrometheusRecorder {
        &self.recorder
    }

    /// The upstreams whose in-rotation gauge each scrape refreshes.
    pub(super) fn upstreams(&self) -> &super::observe::Upstreams {
        &self.upstreams
    }

    /// Folds pending histogram samples; run periodically so memory stays flat between scrapes.
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }
}

fn adapter_key(adapter: &Arc<dyn mcp_adapter_api::Adapter>) -> usize {
    Arc::as_ptr(adapter).cast::<()>() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(prefix))
    }

    #[test]
    fn handles_count_and_render_as_prometheus_text() {
        let m = Metrics::new(&[], false);
        let h = m.for_request("tools/list", None);
        m.request_done(&h, Outcome::Ok, Duration::from_millis(3), "2026-07-28", None);
        m.request_done(&h, Outcome::Ok, Duration::from_millis(3), "2026-07-28", None);
        m.request_done(&h, Outcome::InputRequired, Duration::from_millis(1), "2026-07-28", None);
        let again = m.for_request("tools/list", None);
        assert!(Arc::ptr_eq(&h, &again), "pre-registered: the same handles every time");
        let ext = m.for_request("tasks/get", None);
        assert!(Arc::ptr_eq(&ext, &m.for_request("tasks/get", None)), "registered once on first use");
        m.cache("tool_result").hit();
        m.rate_limited("subject").increment(2);
        m.rejected("overloaded");
        m.rejected("overloaded");
        let text = m.render();
        assert!(
            line(&text, r#"mcp_server_requests_total{method="tools/list",tool="",outcome="ok"} 2"#).is_some(),
            "{text}"
        );
        assert!(line(&text, r#"mcp_mrtr_input_required_total{method="tools/list",tool=""} 1"#).is_some(), "{text}");
        assert!(
            line(
                &text,
                r#"mcp_server_request_duration_seconds_bucket{method="tools/list",tool="",outcome="ok",le="0.005"} 2"#
            )
            .is_some(),
            "{text}"
        );
        assert!(line(&text, r#"mcp_cache_requests_total{cache="tool_result",result="hit"} 1"#).is_some(), "{text}");
        assert!(line(&text, r#"mcp_rate_limited_total{scope="subject"} 2"#).is_some(), "{text}");
        assert!(line(&text, r#"mcp_server_rejected_total{reason="overloaded"} 2"#).is_some(), "{text}");
    }
}
