//! The upstream pool: base URLs chosen round-robin; an upstream that fails
//! `consecutive_failures` times in a row (connect errors, 5xx) leaves the rotation for
//! `eject_ms`, then comes back half-open (one more failure ejects it again, a success clears
//! it); an optional health check restores it as soon as it answers 2xx. Lock-free: one
//! atomic counter for the rotation and two atomics per upstream. Ejections, early returns and
//! retries are reported to the adapter's observer ([`Pool::observe`]).

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use mcp_adapter_api::{Observe, UpstreamEvents};
use reqwest::{Client, Url};
use tokio::time::Instant;

use crate::config::{ConfigProblem, EjectionConfig, HealthCheckConfig};

/// One base URL and its health.
#[derive(Debug)]
pub struct Upstream {
    /// `scheme://host[:port][/path]` without a trailing `/`; request paths are appended.
    pub base: String,
    /// Host, for spans and logs.
    pub host: String,
    /// Port (the scheme's default when not written).
    pub port: u16,
    failures: AtomicU32,
    /// Milliseconds since the pool's epoch until which the upstream is out; 0: in rotation.
    ejected_until: AtomicU64,
    /// Where ejections, returns and retries are reported (unset: nowhere).
    events: OnceLock<Arc<dyn UpstreamEvents>>,
}

impl Upstream {
    fn events(&self) -> Option<&dyn UpstreamEvents> {
        self.events.get().map(|e| &**e)
    }
}

/// The upstreams of one adapter.
#[derive(Debug)]
pub struct Pool {
    upstreams: Vec<Upstream>,
    next: AtomicUsize,
    threshold: u32,
    eject_ms: u64,
    epoch: Instant,
    /// The epoch as Unix milliseconds, for the console's "since".
    epoch_unix_ms: u64,
}

impl Pool {
    /// Checks the base URLs: `http`/`https`, a host, no credentials, query or fragment
    /// (credentials go in `[auth]`, where they are typed as secrets).
    pub fn new(base_urls: &[String], ejection: &EjectionConfig) -> Result<Self, ConfigProblem> {
        if base_urls.is_empty() {
            return Err(ConfigProblem::new("base_urls", "list at least one base URL"));
        }
        if ejection.consecutive_failures == 0 || ejection.eject_ms == 0 {
            return Err(ConfigProblem::new("ejection", "consecutive_failures and eject_ms must be at least 1"));
        }
        let upstreams = base_urls
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                let problem = |p: &str| ConfigProblem::new(format!("base_urls[{i}]"), format!("'{raw}' {p}"));
                let url = Url::parse(raw).map_err(|e| problem(&format!("is not a URL ({e})")))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(problem("must be an http:// or https:// URL"));
                }
                if !url.username().is_empty() || url.password().is_some() {
                    return Err(problem("must not carry credentials; use [auth]"));
                }
                if url.query().is_some() || url.fragment().is_some() {
                    return Err(problem("must not have a query or fragment"));
                }
                let host = url.host_str().ok_or_else(|| problem("has no host"))?.to_owned();
                let port = url.port_or_known_default().unwrap_or(80);
                Ok(Upstream {
                    base: url.as_str().trim_end_matches('/').to_owned(),
                    host,
                    port,
                    failures: AtomicU32::new(0),
                    ejected_until: AtomicU64::new(0),
                    events: OnceLock::new(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            upstreams,
            next: AtomicUsize::new(0),
            threshold: ejection.consecutive_failures,
            eject_ms: ejection.eject_ms,
            epoch: Instant::now(),
            epoch_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        })
    }

    /// Reports this pool's events to `observe`, one handle per upstream (the first call wins).
    pub fn observe(&self, observe: &Observe) {
        for u in &self.upstreams {
            let _ = u.events.set(observe.upstream(&u.base));
        }
    }

    /// A request that failed on upstream `i` is about to be retried.
    pub fn retried(&self, i: usize) {
        if let Some(e) = self.upstreams.get(i).and_then(Upstream::events) {
            e.retried();
        }
    }

    /// The upstream at `i`.
    pub fn get(&self, i: usize) -> &Upstream {
        &self.upstreams[i]
    }

    /// The base URL of upstream `i`, if there is one.
    pub fn base(&self, i: usize) -> Option<&str> {
        self.upstreams.get(i).map(|u| u.base.as_str())
    }

    /// How many upstreams the pool has.
    pub fn count(&self) -> usize {
        self.upstreams.len()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn ejected_at(&self, i: usize, now: u64) -> bool {
        now < self.upstreams[i].ejected_until.load(Ordering::Relaxed)
    }

    /// True while upstream `i` is out of rotation.
    pub fn is_ejected(&self, i: usize) -> bool {
        self.ejected_at(i, self.now_ms())
    }

    /// The next upstream in rotation, skipping ejected ones and, when there is a choice,
    /// `avoid` (the upstream the previous attempt of this call used). When every upstream is
    /// ejected, rotation ignores ejection: trying beats failing without a try.
    pub fn pick(&self, avoid: Option<usize>) -> usize {
        let n = self.upstreams.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let now = self.now_ms();
        let candidates = (0..n).map(|k| (start + k) % n).filter(|&i| n == 1 || Some(i) != avoid);
        let mut first = None;
        for i in candidates {
            if !self.ejected_at(i, now) {
                return i;
            }
            first.get_or_insert(i);
        }
        first.unwrap_or(start % n)
    }

    /// Each upstream's state for the operator console: in rotation or ejected (since when,
    /// with how many failures in a row).
    pub fn status(&self) -> Vec<mcp_adapter_api::Backend> {
        let now = self.now_ms();
        (0..self.upstreams.len())
            .map(|i| {
                let u = &self.upstreams[i];
                let until = u.ejected_until.load(Ordering::Relaxed);
                let ejected = self.ejected_at(i, now);
                let mut b = mcp_adapter_api::Backend::new(&u.base, if ejected { "ejected" } else { "in_rotation" });
                b.failures = u.failures.load(Ordering::Relaxed);
                if ejected {
                    b.since_ms = Some(self.epoch_unix_ms + until.saturating_sub(self.eject_ms));
                }
                b
            })
            .collect()
    }

    /// Upstream `i` answered (below 500): it is healthy again.
    pub fn success(&self, i: usize) {
        let u = &self.upstreams[i];
        if u.failures.load(Ordering::Relaxed) != 0 {
            u.failures.store(0, Ordering::Relaxed);
        }
        if u.ejected_until.load(Ordering::Relaxed) != 0 {
            let was = u.ejected_until.swap(0, Ordering::Relaxed);
            if let Some(e) = u.events().filter(|_| self.now_ms() < was) {
                e.restored();
            }
            tracing::info!(upstream = %u.base, "upstream restored");
        }
    }

    /// Upstream `i` failed (connect error, transport error, 5xx, failed probe).
    pub fn failure(&self, i: usize) {
        let u = &self.upstreams[i];
        let failures = u.failures.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        if failures >= self.threshold {
            let now = self.now_ms();
            let was = u.ejected_until.swap(now + self.eject_ms, Ordering::Relaxed);
            if was <= now {
                tracing::warn!(upstream = %u.base, failures, eject_ms = self.eject_ms, "upstream ejected");
            }
            if let Some(e) = u.events() {
                e.ejected(Duration::from_millis(self.eject_ms), was > now);
            }
        }
    }
}

/// The problems of `[adapters.health_check]` itself.
pub fn check_health_config(config: &HealthCheckConfig) -> Result<(), ConfigProblem> {
    if !config.path.starts_with('/') {
        return Err(ConfigProblem::new("health_check.path", format!("'{}' must start with '/'", config.path)));
    }
    if config.interval_ms < 10 || config.timeout_ms == 0 {
        return Err(ConfigProblem::new("health_check", "interval_ms must be at least 10 and timeout_ms at least 1"));
    }
    Ok(())
}

/// Starts the health check of every upstream of `pool` (its config checked by
/// [`check_health_config`]). The task holds only a weak reference: it ends at the first tick
/// after the adapter (a replaced config) is dropped.
pub fn spawn_health_checks(pool: &Arc<Pool>, client: Client, config: &HealthCheckConfig) -> Result<(), ConfigProblem> {
    check_health_config(config)?;
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| ConfigProblem::new("health_check", "needs a Tokio runtime to run in"))?;
    let weak: Weak<Pool> = Arc::downgrade(pool);
    let urls: Vec<String> = pool.upstreams.iter().map(|u| format!("{}{}", u.base, config.path)).collect();
    let (interval, timeout) = (Duration::from_millis(config.interval_ms), Duration::from_millis(config.timeout_ms));
    runtime.spawn(async move {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(pool) = weak.upgrade() else { break };
            let mut probes = tokio::task::JoinSet::new();
            for (i, url) in urls.iter().enumerate() {
                let request = client.get(url).timeout(timeout);
                probes.spawn(async move { (i, request.send().await.is_ok_and(|r| r.status().is_success())) });
            }
            while let Some(Ok((i, healthy))) = probes.join_next().await {
                if healthy { pool.success(i) } else { pool.failure(i) }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(n: usize, threshold: u32) -> Pool {
        let urls: Vec<String> = (0..n).map(|i| format!("http://127.0.0.{}:80/api/", i + 1)).collect();
        Pool::new(&urls, &EjectionConfig { consecutive_failures: threshold, eject_ms: 1_000 }).unwrap()
    }

    #[test]
    fn base_urls_are_checked() {
        let ej = EjectionConfig::default();
        let key = |u: &str| Pool::new(&[u.to_owned()], &ej).unwrap_err().key;
        assert_eq!(key("ftp://h"), "base_urls[0]");
        assert_eq!(key("http://u:p@h"), "base_urls[0]");
        assert_eq!(key("http://h/?q=1"), "base_urls[0]");
        assert_eq!(key("nope"), "base_urls[0]");
        assert_eq!(Pool::new(&[], &ej).unwrap_err().key, "base_urls");
        let p = Pool::new(&["https://api.example.com/v1/".to_owned()], &ej).unwrap();
        assert_eq!((p.get(0).base.as_str(), p.get(0).port), ("https://api.example.com/v1", 443));
    }

    #[tokio::test(start_paused = true)]
    async fn round_robin_skips_ejected_upstreams_until_they_return() {
        let p = pool(3, 2);
        assert_eq!((0..6).map(|_| p.pick(None)).collect::<Vec<_>>(), [0, 1, 2, 0, 1, 2]);
        p.failure(1);
        assert!(!p.is_ejected(1), "one failure is not enough");
        p.failure(1);
        assert!(p.is_ejected(1));
        assert!((0..6).map(|_| p.pick(None)).all(|i| i != 1));

        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert!(!p.is_ejected(1), "back after eject_ms");
        p.failure(1);
        assert!(p.is_ejected(1), "half-open: one more failure ejects again");
        tokio::time::advance(Duration::from_millis(1_001)).await;
        p.success(1);
        p.failure(1);
        assert!(!p.is_ejected(1), "a success clears the count");
    }

    /// Records what the pool reports.
    #[derive(Debug, Default)]
    struct Recorded(std::sync::Mutex<Vec<String>>);

    impl UpstreamEvents for Recorded {
        fn ejected(&self, period: Duration, renewed: bool) {
            self.0.lock().unwrap().push(format!("ejected {}ms renewed={renewed}", period.as_millis()));
        }
        fn restored(&self) {
            self.0.lock().unwrap().push("restored".into());
        }
        fn retried(&self) {
            self.0.lock().unwrap().push("retried".into());
        }
    }

    struct Observer(Arc<Recorded>);

    impl mcp_adapter_api::Observer for Observer {
        fn upstream(&self, upstream: &str) -> Arc<dyn UpstreamEvents> {
            self.0.0.lock().unwrap().push(format!("watching {upstream}"));
            Arc::clone(&self.0) as Arc<dyn UpstreamEvents>
        }
        fn exits(&self, _: &str) -> Arc<dyn mcp_adapter_api::ExitEvents> {
            Arc::new(mcp_adapter_api::observe::Ignore)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn ejections_returns_and_retries_reach_the_observer() {
        let p = pool(1, 2);
        let seen = Arc::new(Recorded::default());
        p.observe(&Observe::new(Arc::new(Observer(Arc::clone(&seen)))));
        p.failure(0);
        p.failure(0);
        p.failure(0);
        p.retried(0);
        p.success(0);
        p.failure(0);
        p.failure(0);
        tokio::time::advance(Duration::from_millis(1_001)).await;
        p.success(0);
        assert_eq!(
            *seen.0.lock().unwrap(),
            [
                "watching http://127.0.0.1/api",
                "ejected 1000ms renewed=false",
                "ejected 1000ms renewed=true",
                "retried",
                "restored",
                "ejected 1000ms renewed=false",
            ],
            "a success after the period is over is no early return"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn retries_avoid_the_previous_upstream_and_all_ejected_still_rotates() {
        let p = pool(2, 1);
        for _ in 0..4 {
            assert_eq!(p.pick(Some(0)), 1);
        }
        p.failure(0);
        p.failure(1);
        let picked: Vec<usize> = (0..4).map(|_| p.pick(None)).collect();
        assert!(picked.contains(&0) && picked.contains(&1), "{picked:?}");
        let single = pool(1, 1);
        assert_eq!(single.pick(Some(0)), 0);
    }
}
