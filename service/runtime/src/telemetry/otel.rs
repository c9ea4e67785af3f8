//! OpenTelemetry plumbing: OTLP/HTTP exporters (built before the async runtime: the blocking
//! HTTP client runs on the SDK's own threads) of spans, metrics and the audit trail's log
//! records, and W3C trace context (`traceparent`, `tracestate`, `baggage`) read from `_meta`
//! or headers and written for upstreams.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

use axum::http::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector, TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};

use crate::config::OtlpConfig;
use crate::rpc::Envelope;

/// The providers to flush and shut down when the process ends.
#[derive(Debug)]
pub struct Providers {
    /// Spans, when trace export is on.
    pub tracer: Option<SdkTracerProvider>,
    /// Metrics, when OTLP metric export is on.
    pub meter: Option<SdkMeterProvider>,
    /// Log records, when the audit trail goes to the collector.
    pub logger: Option<SdkLoggerProvider>,
}

/// The audit trail's log provider, once [`build`] made it (the trail's writer starts later,
/// inside the async runtime, and takes its logger from here).
static AUDIT_LOGS: OnceLock<SdkLoggerProvider> = OnceLock::new();

/// The logger the audit trail emits its lines with, when `[audit] sink = "otlp"`.
pub fn audit_logger() -> Option<SdkLogger> {
    use opentelemetry::logs::LoggerProvider as _;
    AUDIT_LOGS.get().map(|p| p.logger("mcp-runtime.audit"))
}

/// Builds the exporters and providers. Call before the Tokio runtime exists (see the
/// exporter trap in TOOLING.md).
pub fn build(cfg: &OtlpConfig) -> anyhow::Result<Providers> {
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(cfg.service_name.clone())
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    let headers: HashMap<String, String> =
        cfg.headers.iter().map(|(k, v)| (k.clone(), String::from_utf8_lossy(v.expose()).into_owned())).collect();
    let tracer = match &cfg.traces_endpoint {
        Some(url) => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_endpoint(url)
                .with_timeout(cfg.timeout)
                .with_headers(headers.clone())
                .build()?;
            let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(cfg.sample_ratio)));
            Some(
                SdkTracerProvider::builder()
                    .with_resource(resource.clone())
                    .with_sampler(sampler)
                    .with_batch_exporter(exporter)
                    .build(),
            )
        }
        None => None,
    };
    let meter = match &cfg.metrics_endpoint {
        Some(url) => {
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_endpoint(url)
                .with_timeout(cfg.timeout)
                .with_headers(headers.clone())
                .build()?;
            let reader = PeriodicReader::builder(exporter).with_interval(cfg.metrics_interval).build();
            Some(SdkMeterProvider::builder().with_resource(resource.clone()).with_reader(reader).build())
        }
        None => None,
    };
    // The batch processor queues records for its own export thread and drops them when its
    // queue is full: a stalled collector never slows the writer (the chain shows the gap).
    let logger = match &cfg.logs_endpoint {
        Some(url) => {
            let exporter = opentelemetry_otlp::LogExporter::builder()
                .with_http()
                .with_endpoint(url)
                .with_timeout(cfg.timeout)
                .with_headers(headers)
                .build()?;
            let provider = SdkLoggerProvider::builder().with_resource(resource).with_batch_exporter(exporter).build();
            let _ = AUDIT_LOGS.set(provider.clone());
            Some(provider)
        }
        None => None,
    };
    Ok(Providers { tracer, meter, logger })
}

/// W3C Trace Context + W3C Baggage, the propagators SEP-414 names.
static PROPAGATOR: LazyLock<TextMapCompositePropagator> = LazyLock::new(|| {
    TextMapCompositePropagator::new(vec![Box::new(TraceContextPropagator::new()), Box::new(BaggagePropagator::new())])
});

/// The trace context a request's `_meta` carries (SEP-414), if it names a valid parent.
pub fn from_meta(env: &Envelope) -> Option<Context> {
    env.traceparent.as_ref()?;
    valid(PROPAGATOR.extract(&MetaCarrier(env)))
}

/// The trace context of the HTTP request headers, if they name a valid parent.
pub fn from_headers(headers: &HeaderMap) -> Option<Context> {
    headers.get("traceparent")?;
    valid(PROPAGATOR.extract(&HeaderCarrier(headers)))
}

fn valid(cx: Context) -> Option<Context> {
    cx.span().span_context().is_valid().then_some(cx)
}

/// The headers that carry `cx` to an upstream.
pub fn inject(cx: &Context) -> Vec<(&'static str, String)> {
    let mut out = Carrier(Vec::with_capacity(2));
    PROPAGATOR.inject_context(cx, &mut out);
    out.0
}

struct MetaCarrier<'a>(&'a Envelope);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0.traceparent.as_deref(),
            "tracestate" => self.0.tracestate.as_deref(),
            "baggage" => self.0.baggage.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate", "baggage"]
    }
}

struct HeaderCarrier<'a>(&'a HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Collects the propagation headers under their static names.
struct Carrier(Vec<(&'static str, String)>);

impl Injector for Carrier {
    fn set(&mut self, key: &str, value: String) {
        let name = match key {
            "traceparent" => "traceparent",
            "tracestate" => "tracestate",
            "baggage" => "baggage",
            _ => return,
        };
        if !value.is_empty() {
            self.0.push((name, value));
        }
    }
}

/// The trace id of a `traceparent` value (`00-<32 hex>-<16 hex>-<2 hex>`), for log lines
/// when OpenTelemetry itself is off.
pub fn trace_id_of(traceparent: &str) -> Option<&str> {
    let id = traceparent.split('-').nth(1)?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) && id.bytes().any(|b| b != b'0')).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn envelope(tp: Option<&str>, baggage: Option<&str>) -> Envelope {
        Envelope {
            protocol_version: "2026-07-28".into(),
            client_capabilities: json!({}),
            progress_token: None,
            log_level: None,
            traceparent: tp.map(str::to_owned),
            tracestate: Some("rojo=00f067aa0ba902b7".into()),
            baggage: baggage.map(str::to_owned),
            client: None,
            legacy: false,
        }
    }

    #[test]
    fn meta_context_round_trips_with_state_and_baggage() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let cx = from_meta(&envelope(Some(tp), Some("user=alice"))).unwrap();
        assert_eq!(cx.span().span_context().trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let headers = inject(&cx);
        assert!(headers.contains(&("traceparent", tp.to_owned())), "{headers:?}");
        assert!(headers.contains(&("tracestate", "rojo=00f067aa0ba902b7".to_owned())), "{headers:?}");
        assert!(headers.contains(&("baggage", "user=alice".to_owned())), "{headers:?}");
    }

    #[test]
    fn invalid_or_missing_parents_are_ignored() {
        assert!(from_meta(&envelope(None, None)).is_none());
        assert!(from_meta(&envelope(Some("garbage"), None)).is_none());
        let mut h = HeaderMap::new();
        h.insert("traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01".parse().unwrap());
        assert!(from_headers(&h).is_none());
        assert_eq!(
            trace_id_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(trace_id_of("00-zz-00f067aa0ba902b7-01"), None);
    }
}
