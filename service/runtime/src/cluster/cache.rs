//! The result cache: moka in process (L1) and, when configured, Redis shared by the cluster
//! (L2), behind one interface. Cached values are complete result objects (without the
//! JSON-RPC id), so a hit costs a lookup and a copy into the response.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use moka::Expiry;

use super::redis::Redis;
use crate::telemetry::metrics::{CacheCounters, Metrics};

/// Entries kept in process at most.
const L1_CAPACITY: u64 = 10_000;

#[derive(Clone)]
struct Entry {
    body: Bytes,
    ttl: Duration,
}

struct PerEntryTtl;

impl Expiry<Arc<str>, Entry> for PerEntryTtl {
    fn expire_after_create(&self, _key: &Arc<str>, value: &Entry, _created_at: Instant) -> Option<Duration> {
        Some(value.ttl)
    }

    fn expire_after_update(
        &self,
        _key: &Arc<str>,
        value: &Entry,
        _updated_at: Instant,
        _left: Option<Duration>,
    ) -> Option<Duration> {
        Some(value.ttl)
    }
}

/// L1 + optional L2.
pub struct ResultCache {
    l1: moka::future::Cache<Arc<str>, Entry>,
    l2: Option<Arc<Redis>>,
    l1_counts: CacheCounters,
    l2_counts: CacheCounters,
}

impl std::fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultCache")
            .field("l1_entries", &self.l1.entry_count())
            .field("l2", &self.l2.is_some())
            .finish()
    }
}

impl ResultCache {
    /// A cache, shared through `l2` when given; hits and misses counted in `metrics`
    /// (`mcp_cache_requests_total{cache="l1"|"l2"}`).
    pub fn new(l2: Option<Arc<Redis>>, metrics: &Metrics) -> Self {
        let l1 = moka::future::Cache::builder().max_capacity(L1_CAPACITY).expire_after(PerEntryTtl).build();
        Self { l1, l2, l1_counts: metrics.cache("l1"), l2_counts: metrics.cache("l2") }
    }

    /// The cached body for `key`: L1, then L2 (which refills L1 for the remaining TTL).
    pub async fn get(&self, key: &str) -> Option<Bytes> {
        if let Some(e) = self.l1.get(key).await {
            self.l1_counts.hit();
            return Some(e.body);
        }
        self.l1_counts.miss();
        if let Some(redis) = &self.l2 {
            let redis_key = redis.key(&format!("cache:{key}"));
            let found = redis
                .call(|mut con| async move {
                    redis::pipe().get(&redis_key).pttl(&redis_key).query_async::<(Option<Vec<u8>>, i64)>(&mut con).await
                })
                .await;
            if let Ok((Some(body), ttl_ms)) = found
                && ttl_ms > 0
            {
                let body = Bytes::from(body);
                let ttl = Duration::from_millis(u64::try_from(ttl_ms).unwrap_or(0));
                self.l1.insert(Arc::from(key), Entry { body: body.clone(), ttl }).await;
                self.l2_counts.hit();
                return Some(body);
            }
            self.l2_counts.miss();
        }
        None
    }

    /// Stores `body` for `ttl` in L1 and L2 (an L2 failure only loses sharing).
    pub async fn put(&self, key: &str, body: Bytes, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        self.l1.insert(Arc::from(key), Entry { body: body.clone(), ttl }).await;
        if let Some(redis) = &self.l2 {
            let redis_key = redis.key(&format!("cache:{key}"));
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            let _ = redis
                .call(|mut con| async move {
                    redis::cmd("SET")
                        .arg(&redis_key)
                        .arg(body.as_ref())
                        .arg("PX")
                        .arg(ms)
                        .query_async::<()>(&mut con)
                        .await
                })
                .await;
        }
    }

    /// Drops every L1 entry (after a reload: results may come from other adapters now).
    pub fn clear_local(&self) {
        self.l1.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn l1_hits_until_the_ttl_runs_out() {
        let metrics = Metrics::new(&[], false);
        let c = ResultCache::new(None, &metrics);
        assert!(c.get("k").await.is_none());
        c.put("k", Bytes::from_static(b"{}"), Duration::from_millis(50)).await;
        assert_eq!(c.get("k").await.unwrap(), Bytes::from_static(b"{}"));
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(c.get("k").await.is_none());
        let text = metrics.render();
        assert!(text.contains(r#"mcp_cache_requests_total{cache="l1",result="hit"} 1"#), "{text}");
        assert!(text.contains(r#"mcp_cache_requests_total{cache="l1",result="miss"} 2"#), "{text}");
    }
}
