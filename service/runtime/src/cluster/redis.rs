//! The Redis link: one auto-reconnecting connection per replica (to a server, a Sentinel's
//! master or a Cluster: [`super::link`]), a timeout on every call, and a circuit breaker so a slow or dead Redis costs a request at most one timeout per open
//! period instead of one per call. State changes (down, back) are logged once each.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

pub use super::link::Conn;
use super::link::Link;

use crate::clock::now_ms;
use crate::config::RedisConfig;

/// Redis could not answer (down, slow, or the breaker is open): use local state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unavailable;

/// One Redis operation under its timeout, type-erased (see [`Redis::call`]).
type BoxedAnswer<'a, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<redis::RedisResult<T>, tokio::time::error::Elapsed>> + Send + 'a>>;

/// Consecutive failures before the breaker opens.
const FAILURES_TO_OPEN: u32 = 3;

/// The shared Redis of the cluster.
pub struct Redis {
    link: Link,
    timeout: Duration,
    open_for: Duration,
    prefix: String,
    /// Whether readiness depends on Redis.
    pub required: bool,
    failures: AtomicU32,
    open_until_ms: AtomicU64,
    up: AtomicBool,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("prefix", &self.prefix).field("up", &self.is_up()).finish()
    }
}

impl Redis {
    /// A lazily connecting link (start-up never waits for Redis).
    pub fn new(config: &RedisConfig) -> redis::RedisResult<Self> {
        Ok(Self {
            link: Link::new(config)?,
            timeout: config.timeout,
            open_for: config.breaker_open,
            prefix: config.key_prefix.clone(),
            required: config.required,
            failures: AtomicU32::new(0),
            open_until_ms: AtomicU64::new(0),
            up: AtomicBool::new(true),
        })
    }

    /// Runs one Redis operation under the timeout and the breaker.
    pub async fn call<T, F, Fut>(&self, op: F) -> Result<T, Unavailable>
    where
        T: Send,
        F: FnOnce(Conn) -> Fut + Send,
        Fut: Future<Output = redis::RedisResult<T>> + Send,
    {
        if !self.allow() {
            return Err(Unavailable);
        }
        let mut leased = None;
        // Boxed: a Redis client's futures are several KB, and every async fn that may call
        // Redis (the result cache, rate limits, the 2025-era preferences) would otherwise carry
        // that size inline, up to the request's future that every HTTP layer moves (with LTO
        // off, 87k instructions per tools/call against 61k now, most of the difference
        // memcpy). One allocation per Redis call instead.
        let answer: BoxedAnswer<'_, T> = Box::pin(tokio::time::timeout(self.timeout, async {
            let lease = self.link.lease().await?;
            let conn = lease.conn.clone();
            leased = Some(lease);
            op(conn).await
        }));
        let answer = answer.await;
        let error = match answer {
            Ok(Ok(v)) => {
                self.succeeded();
                return Ok(v);
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} ms", self.timeout.as_millis()),
        };
        if let Some(lease) = &leased {
            self.link.failed(lease);
        }
        self.failed(&error);
        Err(Unavailable)
    }

    /// Claims `name` for `ttl` (`SET NX PX`): `true` for the first claim in that time.
    pub async fn claim(&self, name: &str, ttl: Duration) -> Result<bool, Unavailable> {
        let key = self.key(name);
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.call(|mut con| async move {
            redis::cmd("SET")
                .arg(&key)
                .arg("1")
                .arg("NX")
                .arg("PX")
                .arg(ms)
                .query_async::<Option<String>>(&mut con)
                .await
        })
        .await
        .map(|set| set.is_some())
    }

    /// A namespaced key: `<prefix><name>`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Whether the last calls succeeded.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// Marks Redis reachable (a dedicated connection, such as pub/sub, got through).
    pub fn succeeded(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.open_until_ms.store(0, Ordering::Relaxed);
        if !self.up.swap(true, Ordering::Relaxed) {
            tracing::info!("redis is reachable again: shared caches, rate limits, tasks and fan-out resume");
        }
    }

    /// Listens on `channel` until `shutdown`: each message's payload goes to `on_message`. A
    /// lost or failed subscription counts as a Redis failure and is retried with backoff (0.1 s
    /// doubling to 5 s); `on_resubscribed` runs once a subscription is back after one was lost,
    /// for listeners that must assume they missed messages.
    pub async fn listen(
        &self,
        channel: &str,
        shutdown: &CancellationToken,
        mut on_resubscribed: impl FnMut(),
        mut on_message: impl FnMut(&str),
    ) {
        let mut backoff = Duration::from_millis(100);
        let mut missed = false;
        loop {
            let connected = tokio::time::timeout(Duration::from_secs(2), async {
                let mut pubsub = self.link.pubsub_client().await?.get_async_pubsub().await?;
                pubsub.subscribe(channel).await?;
                Ok::<_, redis::RedisError>(pubsub)
            })
            .await;
            match connected {
                Ok(Ok(pubsub)) => {
                    self.succeeded();
                    backoff = Duration::from_millis(100);
                    if missed {
                        on_resubscribed();
                    }
                    let mut messages = pubsub.into_on_message();
                    loop {
                        tokio::select! {
                            () = shutdown.cancelled() => return,
                            msg = messages.next() => {
                                let Some(msg) = msg else { break };
                                if let Ok(payload) = msg.get_payload::<String>() {
                                    on_message(&payload);
                                }
                            }
                        }
                    }
                    self.failed("a subscription was closed");
                }
                Ok(Err(e)) => self.failed(&e.to_string()),
                Err(_) => self.failed("subscribing timed out"),
            }
            missed = true;
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = shutdown.cancelled() => return,
            }
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }

    /// Records a failure; opens the breaker after a few in a row.
    pub fn failed(&self, error: &str) {
        let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= FAILURES_TO_OPEN {
            self.open_until_ms
                .store(now_ms() + u64::try_from(self.open_for.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
            if self.up.swap(false, Ordering::Relaxed) {
                tracing::warn!(
                    error,
                    "redis unavailable: falling back to local caches, rate limits and tasks on this replica"
                );
            }
        }
    }

    /// Closed, or open but due for one probe (half-open).
    fn allow(&self) -> bool {
        let until = self.open_until_ms.load(Ordering::Relaxed);
        if until == 0 {
            return true;
        }
        let now = now_ms();
        // One caller wins the probe; the others keep skipping until it reports.
        now >= until
            && self
                .open_until_ms
                .compare_exchange(
                    until,
                    now + u64::try_from(self.open_for.as_millis()).unwrap_or(u64::MAX),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
    }
}
