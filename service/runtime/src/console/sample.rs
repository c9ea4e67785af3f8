//! The console's background task: every [`SAMPLE_EVERY`] it reads the counters into the
//! charts' series and, with Redis, publishes this replica's heartbeat, a member of one sorted
//! set scored by time (one key, so a Redis Cluster is fine), with a TTL on the set.

use std::sync::Arc;

use crate::clock;
use crate::state::{AppState, SAMPLE_EVERY};

/// Replicas whose last heartbeat is older than this are no longer listed.
pub const HEARTBEAT_STALE_MS: u64 = 15_000;

/// The sorted set of heartbeats (under the Redis key prefix).
pub const HEARTBEATS_KEY: &str = "console:replicas";

/// Starts the task (when the console is enabled); it ends at shutdown.
pub fn spawn(state: &Arc<AppState>) {
    if state.console.is_none() {
        return;
    }
    let state = Arc::clone(state);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SAMPLE_EVERY);
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Some(console) = &state.console {
                let text = state.metrics.render();
                let mut series = console.series.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                series.sample(clock::now_ms(), &text);
            }
            heartbeat(&state).await;
        }
    });
}

async fn heartbeat(state: &AppState) {
    let Some(redis) = &state.redis else { return };
    let key = redis.key(HEARTBEATS_KEY);
    let now = clock::now_ms();
    let replica = state.replica.clone();
    let _ = redis
        .call(|mut con| async move {
            redis::pipe()
                .zadd(&key, &replica, now)
                .ignore()
                .zrembyscore(&key, 0, now.saturating_sub(HEARTBEAT_STALE_MS))
                .ignore()
                .pexpire(&key, i64::try_from(HEARTBEAT_STALE_MS * 4).unwrap_or(i64::MAX))
                .ignore()
                .query_async::<()>(&mut con)
                .await
        })
        .await;
}

/// The replicas seen within [`HEARTBEAT_STALE_MS`], with their last heartbeat (Unix ms);
/// `None` without Redis or when it does not answer.
pub async fn replicas(state: &AppState) -> Option<Vec<(String, u64)>> {
    let redis = state.redis.as_ref()?;
    let key = redis.key(HEARTBEATS_KEY);
    let since = clock::now_ms().saturating_sub(HEARTBEAT_STALE_MS);
    redis
        .call(|mut con| async move {
            redis::cmd("ZRANGEBYSCORE")
                .arg(&key)
                .arg(since)
                .arg("+inf")
                .arg("WITHSCORES")
                .query_async::<Vec<(String, u64)>>(&mut con)
                .await
        })
        .await
        .ok()
}
