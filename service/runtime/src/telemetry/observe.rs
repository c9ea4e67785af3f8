//! The runtime's side of the adapters' observation seam ([`mcp_adapter_api::observe`]): each
//! adapter gets an [`Observer`] carrying its name, and its events become Prometheus series:
//!
//! - `mcp_upstream_ejections_total{adapter,upstream}`, `mcp_upstream_retries_total{adapter,upstream}`;
//! - `mcp_upstream_in_rotation{adapter,upstream}` (1/0), worked out at each scrape from the
//!   ejection's end, since an ejected upstream rejoins when its period is over, not on an event;
//! - `mcp_cli_exits_total{adapter,tool,code}` with `code` an exit status, `signal` or `timeout`
//!   (bounded: a status is 0 to 255).
//!
//! Handles are registered when the adapter is built (a reload registers the same keys again and
//! gets the same series), so an event is an atomic add; only the first exit with a given
//! status registers its series.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use mcp_adapter_api::{Exit, ExitEvents, Observe, Observer, UpstreamEvents};
use metrics::{Counter, Gauge, Key, KeyName, Label, Recorder as _, SharedString};
use metrics_exporter_prometheus::PrometheusRecorder;

use super::metrics::{META, Metrics};

/// Where `out_until` counts from.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

fn now_ms() -> u64 {
    u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The upstreams whose in-rotation gauge is refreshed at each scrape (dropped adapters' ones
/// fall out on their own).
#[derive(Debug, Default)]
pub struct Upstreams(Mutex<Vec<Weak<UpstreamHandles>>>);

impl Upstreams {
    fn track(&self, h: &Arc<UpstreamHandles>) {
        self.0.lock().expect("upstreams lock").push(Arc::downgrade(h));
    }

    /// Sets every live upstream's gauge from its ejection's end.
    pub fn refresh(&self) {
        let now = now_ms();
        self.0.lock().expect("upstreams lock").retain(|w| {
            let Some(h) = w.upgrade() else { return false };
            h.in_rotation.set(if now < h.out_until.load(Ordering::Relaxed) { 0.0 } else { 1.0 });
            true
        });
    }
}

/// The observer of one adapter.
struct AdapterObserver {
    adapter: Arc<str>,
    metrics: Arc<Metrics>,
}

/// Series of one upstream.
#[derive(Debug)]
pub struct UpstreamHandles {
    ejections: Counter,
    retries: Counter,
    in_rotation: Gauge,
    /// Milliseconds since [`EPOCH`] until which the upstream is out.
    out_until: AtomicU64,
}

impl UpstreamEvents for UpstreamHandles {
    fn ejected(&self, period: Duration, renewed: bool) {
        let until = now_ms().saturating_add(u64::try_from(period.as_millis()).unwrap_or(u64::MAX));
        self.out_until.store(until, Ordering::Relaxed);
        self.in_rotation.set(0.0);
        if !renewed {
            self.ejections.increment(1);
        }
    }

    fn restored(&self) {
        self.out_until.store(0, Ordering::Relaxed);
        self.in_rotation.set(1.0);
    }

    fn retried(&self) {
        self.retries.increment(1);
    }
}

/// Exit series of one CLI tool, registered on first use of each code.
struct ToolExits {
    adapter: Arc<str>,
    tool: Arc<str>,
    metrics: Arc<Metrics>,
    seen: RwLock<HashMap<Exit, Counter>>,
}

impl std::fmt::Debug for ToolExits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolExits").field("adapter", &self.adapter).field("tool", &self.tool).finish()
    }
}

impl ExitEvents for ToolExits {
    fn exited(&self, exit: Exit) {
        if let Some(c) = self.seen.read().expect("exits lock").get(&exit) {
            c.increment(1);
            return;
        }
        let code = match exit {
            Exit::Code(n) => n.to_string(),
            Exit::Signal => "signal".to_owned(),
            Exit::Timeout => "timeout".to_owned(),
        };
        let labels = vec![
            Label::new("adapter", self.adapter.to_string()),
            Label::new("tool", self.tool.to_string()),
            Label::new("code", code),
        ];
        let counter = self.metrics.recorder().register_counter(&Key::from_parts("mcp_cli_exits_total", labels), &META);
        counter.increment(1);
        self.seen.write().expect("exits lock").insert(exit, counter);
    }
}

impl Observer for AdapterObserver {
    fn upstream(&self, upstream: &str) -> Arc<dyn UpstreamEvents> {
        let key = |name: &'static str| {
            Key::from_parts(
                name,
                vec![Label::new("adapter", self.adapter.to_string()), Label::new("upstream", upstream.to_owned())],
            )
        };
        let r = self.metrics.recorder();
        let h = Arc::new(UpstreamHandles {
            ejections: r.register_counter(&key("mcp_upstream_ejections_total"), &META),
            retries: r.register_counter(&key("mcp_upstream_retries_total"), &META),
            in_rotation: r.register_gauge(&key("mcp_upstream_in_rotation"), &META),
            out_until: AtomicU64::new(0),
        });
        h.in_rotation.set(1.0);
        self.metrics.upstreams().track(&h);
        h
    }

    fn exits(&self, tool: &str) -> Arc<dyn ExitEvents> {
        Arc::new(ToolExits {
            adapter: Arc::clone(&self.adapter),
            tool: Arc::from(tool),
            metrics: Arc::clone(&self.metrics),
            seen: RwLock::default(),
        })
    }
}

/// The help text of this module's series.
pub(super) fn describe(r: &PrometheusRecorder) {
    let help = |name: &'static str, text: &'static str| (KeyName::from(name), None, SharedString::from(text));
    for (name, unit, text) in [
        help("mcp_upstream_ejections_total", "Upstreams taken out of an adapter's rotation after consecutive failures"),
        help("mcp_upstream_retries_total", "Requests retried after failing on this upstream"),
        help("mcp_cli_exits_total", "CLI tool runs by how they ended: exit status, signal or timeout"),
    ] {
        r.describe_counter(name, unit, text);
    }
    r.describe_gauge(
        KeyName::from("mcp_upstream_in_rotation"),
        None,
        SharedString::from("1 while the upstream is in its adapter's rotation, 0 while ejected"),
    );
    r.describe_gauge(
        KeyName::from("mcp_redis_up"),
        None,
        SharedString::from("1 while this replica's last Redis calls succeeded, 0 while Redis is unavailable"),
    );
}

/// The observer to build adapter `adapter` with.
pub fn observer(metrics: &Arc<Metrics>, adapter: &str) -> Observe {
    Observe::new(Arc::new(AdapterObserver { adapter: Arc::from(adapter), metrics: Arc::clone(metrics) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(text: &str, line: &str) -> bool {
        text.lines().any(|l| l == line)
    }

    #[test]
    fn events_become_series_and_an_ejection_ends_by_itself() {
        let m = Arc::new(Metrics::new(&[], false));
        let o = observer(&m, "api");
        let up = o.upstream("http://127.0.0.1:1");
        let exits = o.exits("grep");
        up.ejected(Duration::from_secs(3600), false);
        up.ejected(Duration::from_secs(3600), true);
        up.retried();
        for e in [Exit::Code(3), Exit::Code(3), Exit::Code(0), Exit::Signal, Exit::Timeout] {
            exits.exited(e);
        }
        let text = m.render();
        let labels = r#"{adapter="api",upstream="http://127.0.0.1:1"}"#;
        assert!(has(&text, &format!("mcp_upstream_ejections_total{labels} 1")), "renewed is not new: {text}");
        assert!(has(&text, &format!("mcp_upstream_retries_total{labels} 1")), "{text}");
        assert!(has(&text, &format!("mcp_upstream_in_rotation{labels} 0")), "{text}");
        for (code, n) in [("3", 2), ("0", 1), ("signal", 1), ("timeout", 1)] {
            let line = format!(r#"mcp_cli_exits_total{{adapter="api",tool="grep",code="{code}"}} {n}"#);
            assert!(has(&text, &line), "{line} in {text}");
        }
        up.ejected(Duration::ZERO, false);
        assert!(has(&m.render(), &format!("mcp_upstream_in_rotation{labels} 1")), "a period that is over");
        up.ejected(Duration::from_secs(3600), false);
        up.restored();
        assert!(has(&m.render(), &format!("mcp_upstream_ejections_total{labels} 3")));
        assert!(has(&m.render(), &format!("mcp_upstream_in_rotation{labels} 1")), "restored early");
        drop(up);
        m.render();
        assert!(m.upstreams().0.lock().unwrap().is_empty(), "a dropped adapter's upstreams are forgotten");
    }
}
