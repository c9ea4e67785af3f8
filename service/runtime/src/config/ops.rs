//! The operational sections, validated: `[telemetry]` (with the standard `OTEL_*` variables
//! as fallbacks), `[limits]` and `[tls]`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::raw::{RawLimits, RawTelemetry, RawTls};
use super::{ConfigError, Secret};

/// How logs are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, with the request's spans (request id, trace id).
    Json,
}

/// `[telemetry]`, validated.
#[derive(Debug, Clone)]
pub struct TelemetryConfig {
    /// Log format.
    pub log_format: LogFormat,
    /// OpenTelemetry export; `None` means off, and then no OpenTelemetry layer is installed.
    pub otlp: Option<OtlpConfig>,
    /// Separate address for `/metrics` and the probes; `None` serves them on the main listener.
    pub metrics_listen: Option<SocketAddr>,
}

/// Where and how OpenTelemetry data is exported (OTLP over HTTP/protobuf).
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// Full URL for spans (`.../v1/traces`); `None` when traces are off.
    pub traces_endpoint: Option<String>,
    /// Full URL for metrics (`.../v1/metrics`); `None` when OTLP metrics are off.
    pub metrics_endpoint: Option<String>,
    /// Full URL for logs (`.../v1/logs`): kept only when the audit trail goes there
    /// (`[audit] sink = "otlp"`); the runtime's own log lines stay on stderr.
    pub logs_endpoint: Option<String>,
    /// `service.name`.
    pub service_name: String,
    /// Ratio of new traces sampled.
    pub sample_ratio: f64,
    /// Metric export interval.
    pub metrics_interval: Duration,
    /// Timeout of one export.
    pub timeout: Duration,
    /// Extra export headers (`OTEL_EXPORTER_OTLP_HEADERS`), e.g. an API key.
    pub headers: Vec<(String, Secret)>,
}

/// `[limits]`, validated.
#[derive(Debug, Clone)]
pub struct LimitsConfig {
    /// Deadline for the response head of one request.
    pub request_timeout: Duration,
    /// Concurrency limit of the MCP endpoint.
    pub max_concurrent_requests: usize,
    /// Deepest accepted JSON nesting.
    pub max_json_depth: usize,
    /// `Retry-After` on 503.
    pub retry_after_seconds: u64,
    /// Time for a request head (HTTP/1) or a TLS handshake; then the connection is closed.
    pub header_read_timeout: Duration,
    /// Time for a whole request body; then 408.
    pub body_read_timeout: Duration,
    /// Connections open at once per listener.
    pub max_connections: usize,
}

/// `[tls]`, validated.
#[derive(Debug, Clone)]
pub struct TlsConfig {
    /// PEM certificate chain.
    pub cert_file: PathBuf,
    /// PEM private key.
    pub key_file: PathBuf,
    /// Change-check interval.
    pub reload_interval: Duration,
}

/// serde_json refuses nesting deeper than this by itself; a larger limit would be a lie.
const SERDE_DEPTH: usize = 128;

impl TelemetryConfig {
    /// Validates `[telemetry]`; `env` resolves the `OTEL_*` fallbacks.
    pub fn from_raw(raw: &RawTelemetry, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let log_format = match raw.log_format.as_deref().unwrap_or("text") {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => {
                return Err(ConfigError::invalid(
                    "telemetry.log_format",
                    format!("'{other}' is not \"text\" or \"json\""),
                ));
            }
        };
        let metrics_listen = raw
            .metrics_listen
            .as_deref()
            .map(|a| {
                a.parse().map_err(|e| {
                    ConfigError::invalid("telemetry.metrics_listen", format!("'{a}' is not an IP:port address ({e})"))
                })
            })
            .transpose()?;
        Ok(Self { log_format, otlp: otlp(raw, env)?, metrics_listen })
    }
}

/// OpenTelemetry is on when an endpoint is configured (key or `OTEL_EXPORTER_OTLP_*ENDPOINT`)
/// and `OTEL_SDK_DISABLED` is not `true`.
fn otlp(raw: &RawTelemetry, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<OtlpConfig>, ConfigError> {
    let var = |name: &str| env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if let Some(p) = var("OTEL_EXPORTER_OTLP_PROTOCOL").filter(|p| p != "http/protobuf") {
        return Err(ConfigError::invalid(
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            format!("'{p}' is not supported; use http/protobuf (the collector's OTLP/HTTP port, usually 4318)"),
        ));
    }
    let base = raw.otlp_endpoint.clone().filter(|e| !e.is_empty()).or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"));
    let signal = |key: &str, flag: Option<bool>, exporter_var: &str, endpoint_var: &str, path: &str| {
        let on = flag.unwrap_or_else(|| var(exporter_var).is_none_or(|e| e != "none"));
        let url = match (&raw.otlp_endpoint, var(endpoint_var)) {
            (Some(b), _) if !b.is_empty() => Some(join(b, path)),
            (_, Some(full)) => Some(full),
            _ => base.as_deref().map(|b| join(b, path)),
        };
        match url {
            Some(u) if on => check_url(key, &u).map(Some),
            _ => Ok(None),
        }
    };
    let traces = signal(
        "telemetry.otlp_endpoint",
        raw.traces,
        "OTEL_TRACES_EXPORTER",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "v1/traces",
    )?;
    let metrics = signal(
        "telemetry.otlp_endpoint",
        raw.metrics,
        "OTEL_METRICS_EXPORTER",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "v1/metrics",
    )?;
    let logs =
        signal("telemetry.otlp_endpoint", None, "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "v1/logs")?;
    if traces.is_none() && metrics.is_none() && logs.is_none() {
        return Ok(None);
    }
    let sample_ratio = match raw.sample_ratio {
        Some(r) => r,
        None => match var("OTEL_TRACES_SAMPLER_ARG") {
            Some(v) => v
                .parse()
                .map_err(|_| ConfigError::invalid("OTEL_TRACES_SAMPLER_ARG", format!("'{v}' is not a number")))?,
            None => 1.0,
        },
    };
    if !(0.0..=1.0).contains(&sample_ratio) {
        return Err(ConfigError::invalid("telemetry.sample_ratio", "must be between 0.0 and 1.0"));
    }
    let millis = |key: &str, raw: Option<u64>, var_name: &str, default: u64| -> Result<Duration, ConfigError> {
        let ms = match raw {
            Some(ms) => ms,
            None => match var(var_name) {
                Some(v) => {
                    v.parse().map_err(|_| ConfigError::invalid(var_name, format!("'{v}' is not milliseconds")))?
                }
                None => default,
            },
        };
        if ms == 0 {
            return Err(ConfigError::invalid(key, "must be at least 1"));
        }
        Ok(Duration::from_millis(ms))
    };
    let metrics_interval = millis(
        "telemetry.metrics_export_interval_ms",
        raw.metrics_export_interval_ms,
        "OTEL_METRIC_EXPORT_INTERVAL",
        60_000,
    )?;
    let timeout = millis("telemetry.export_timeout_ms", raw.export_timeout_ms, "OTEL_EXPORTER_OTLP_TIMEOUT", 10_000)?;
    let service_name =
        raw.service_name.clone().or_else(|| var("OTEL_SERVICE_NAME")).unwrap_or_else(|| "mcp-runtime".to_owned());
    let headers = var("OTEL_EXPORTER_OTLP_HEADERS").map(|h| parse_headers(&h)).transpose()?.unwrap_or_default();
    Ok(Some(OtlpConfig {
        traces_endpoint: traces,
        metrics_endpoint: metrics,
        logs_endpoint: logs,
        service_name,
        sample_ratio,
        metrics_interval,
        timeout,
        headers,
    }))
}

fn join(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

/// Plain `http://` only: the exporter is built without a TLS stack (export to a collector
/// agent or sidecar on the node or pod network).
fn check_url(key: &str, url: &str) -> Result<String, ConfigError> {
    if url.starts_with("http://") {
        Ok(url.to_owned())
    } else {
        Err(ConfigError::invalid(
            key,
            format!("'{url}' is not an http:// URL (OTLP is exported over plain HTTP to a local collector)"),
        ))
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values percent-encoded.
fn parse_headers(text: &str) -> Result<Vec<(String, Secret)>, ConfigError> {
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                ConfigError::invalid("OTEL_EXPORTER_OTLP_HEADERS", "expected key=value pairs separated by commas")
            })?;
            Ok((k.trim().to_owned(), Secret::new(percent_decode(v.trim()).into_bytes())))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Longest accepted connection-level timeout: a day.
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

impl LimitsConfig {
    /// Validates `[limits]` against the keep-alive interval: a request timeout shorter than it
    /// would cut quiet calls before they switch to SSE.
    pub fn from_raw(raw: &RawLimits, sse_keepalive: Duration) -> Result<Self, ConfigError> {
        let request_timeout = Duration::from_millis(raw.request_timeout_ms);
        if request_timeout <= sse_keepalive {
            return Err(ConfigError::invalid(
                "limits.request_timeout_ms",
                format!(
                    "must be longer than server.sse_keepalive_ms ({} ms): quiet calls switch to SSE after one keep-alive interval",
                    sse_keepalive.as_millis()
                ),
            ));
        }
        if raw.max_concurrent_requests == 0 {
            return Err(ConfigError::invalid("limits.max_concurrent_requests", "must be at least 1"));
        }
        if !(4..=SERDE_DEPTH).contains(&raw.max_json_depth) {
            return Err(ConfigError::invalid(
                "limits.max_json_depth",
                format!("must be between 4 (the request envelope itself) and {SERDE_DEPTH}"),
            ));
        }
        // Slowloris: a client trickling its head or body holds a connection (and a request
        // slot) only this long. Capped at a day so `Instant + Duration` stays far from overflow.
        let bounded = |key: &str, ms: u64| {
            if (1..=MAX_TIMEOUT_MS).contains(&ms) {
                Ok(Duration::from_millis(ms))
            } else {
                Err(ConfigError::invalid(key, format!("must be between 1 and {MAX_TIMEOUT_MS}")))
            }
        };
        let header_read_timeout = bounded("limits.header_read_timeout_ms", raw.header_read_timeout_ms)?;
        let body_read_timeout = bounded("limits.body_read_timeout_ms", raw.body_read_timeout_ms)?;
        if raw.max_connections == 0 {
            return Err(ConfigError::invalid("limits.max_connections", "must be at least 1"));
        }
        Ok(Self {
            request_timeout,
            max_concurrent_requests: raw.max_concurrent_requests,
            max_json_depth: raw.max_json_depth,
            retry_after_seconds: raw.retry_after_seconds,
            header_read_timeout,
            body_read_timeout,
            max_connections: raw.max_connections,
        })
    }
}

impl TlsConfig {
    /// Validates `[tls]` (the files are read before the server listens, and by `check`);
    /// relative paths start at the config file's folder (`env`).
    pub fn from_raw(raw: &RawTls, env: &mcp_adapter_api::Environment) -> Result<Self, ConfigError> {
        if raw.cert_file.is_empty() {
            return Err(ConfigError::invalid("tls.cert_file", "name the PEM certificate chain file"));
        }
        if raw.key_file.is_empty() {
            return Err(ConfigError::invalid("tls.key_file", "name the PEM private key file"));
        }
        if raw.reload_interval_ms < 100 {
            return Err(ConfigError::invalid("tls.reload_interval_ms", "must be at least 100"));
        }
        Ok(Self {
            cert_file: env.path(&raw.cert_file),
            key_file: env.path(&raw.key_file),
            reload_interval: Duration::from_millis(raw.reload_interval_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn off_by_default_and_on_with_an_endpoint() {
        let t = TelemetryConfig::from_raw(&RawTelemetry::default(), &env(&[])).unwrap();
        assert!(t.otlp.is_none());
        assert_eq!(t.log_format, LogFormat::Text);
        let t = TelemetryConfig::from_raw(
            &RawTelemetry::default(),
            &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"), ("OTEL_SERVICE_NAME", "svc")]),
        )
        .unwrap();
        let o = t.otlp.unwrap();
        assert_eq!(o.traces_endpoint.as_deref(), Some("http://c:4318/v1/traces"));
        assert_eq!(o.metrics_endpoint.as_deref(), Some("http://c:4318/v1/metrics"));
        assert_eq!(o.service_name, "svc");
    }

    #[test]
    fn otel_variables_switch_signals_off() {
        let raw = RawTelemetry { otlp_endpoint: Some("http://c:4318".into()), ..Default::default() };
        let t = TelemetryConfig::from_raw(&raw, &env(&[("OTEL_SDK_DISABLED", "true")])).unwrap();
        assert!(t.otlp.is_none());
        let t = TelemetryConfig::from_raw(&raw, &env(&[("OTEL_METRICS_EXPORTER", "none")])).unwrap();
        assert!(t.otlp.unwrap().metrics_endpoint.is_none());
        let e = TelemetryConfig::from_raw(&raw, &env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(e.to_string().starts_with("OTEL_EXPORTER_OTLP_PROTOCOL:"), "{e}");
    }

    #[test]
    fn headers_are_secret_and_decoded() {
        let h = parse_headers("api-key=a%20b, x=1").unwrap();
        assert_eq!(h[0].0, "api-key");
        assert_eq!(h[0].1.expose(), b"a b");
        assert!(!format!("{h:?}").contains("a b"));
    }

    #[test]
    fn limits_are_checked() {
        let keepalive = Duration::from_secs(15);
        assert!(LimitsConfig::from_raw(&RawLimits::default(), keepalive).is_ok());
        let short = RawLimits { request_timeout_ms: 1000, ..RawLimits::default() };
        let e = LimitsConfig::from_raw(&short, keepalive).unwrap_err().to_string();
        assert!(e.starts_with("limits.request_timeout_ms:"), "{e}");
        let deep = RawLimits { max_json_depth: 500, ..RawLimits::default() };
        assert!(LimitsConfig::from_raw(&deep, keepalive).unwrap_err().to_string().starts_with("limits.max_json_depth"));
    }
}
