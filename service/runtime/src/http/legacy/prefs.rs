//! What 2025-era sessions set after `initialize` (`logging/setLevel`, `resources/subscribe`): kept on this replica and, with `[redis]`, shared by every replica.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::state::AppState;

/// Subscriptions one session may hold.
const MAX_SUBSCRIPTIONS: usize = 256;

/// How long Redis keeps a session's preferences (the session's own lifetime).
const TTL_SECS: u64 = super::session::TTL.as_secs();

fn key(state: &AppState, digest: &str, what: &str) -> Option<String> {
    state.redis.as_ref().map(|r| r.key(&format!("legacy:{digest}:{what}")))
}

/// Records the session's `logging/setLevel` (an index into the log levels).
pub async fn set_level(state: &AppState, digest: &str, rank: usize) {
    state.legacy_log_levels.insert(digest.to_owned(), rank).await;
    if let (Some(redis), Some(key)) = (&state.redis, key(state, digest, "level")) {
        let _ = redis
            .call(|mut con| async move {
                redis::cmd("SET").arg(key).arg(rank).arg("EX").arg(TTL_SECS).query_async::<()>(&mut con).await
            })
            .await;
    }
}

/// The session's level: Redis when configured and reachable, else what this replica saw.
pub async fn level(state: &AppState, digest: &str) -> Option<usize> {
    if let (Some(redis), Some(key)) = (&state.redis, key(state, digest, "level")) {
        let shared = redis
            .call(|mut con| async move { redis::cmd("GET").arg(key).query_async::<Option<usize>>(&mut con).await })
            .await;
        if let Ok(level) = shared {
            return level;
        }
    }
    state.legacy_log_levels.get(digest).await
}

/// Adds (`on`) or removes `uri` among the session's subscriptions.
pub async fn subscribe(state: &AppState, digest: &str, uri: &str, on: bool) {
    let mut set: BTreeSet<String> =
        state.legacy_subscriptions.get(digest).await.map(|s| (*s).clone()).unwrap_or_default();
    if on && set.len() < MAX_SUBSCRIPTIONS {
        set.insert(uri.to_owned());
    } else {
        set.remove(uri);
    }
    state.legacy_subscriptions.insert(digest.to_owned(), Arc::new(set)).await;
    if let (Some(redis), Some(key)) = (&state.redis, key(state, digest, "subs")) {
        let uri = uri.to_owned();
        let _ = redis
            .call(|mut con| async move {
                let mut pipe = redis::pipe();
                pipe.cmd(if on { "SADD" } else { "SREM" }).arg(&key).arg(uri).ignore();
                pipe.cmd("EXPIRE").arg(&key).arg(TTL_SECS).ignore();
                pipe.query_async::<()>(&mut con).await
            })
            .await;
    }
}

/// Whether the session subscribed to `uri` (Redis when configured and reachable, else this replica).
pub async fn subscribed(state: &AppState, digest: &str, uri: &str) -> bool {
    if let (Some(redis), Some(key)) = (&state.redis, key(state, digest, "subs")) {
        let uri = uri.to_owned();
        let shared = redis
            .call(
                |mut con| async move { redis::cmd("SISMEMBER").arg(key).arg(uri).query_async::<bool>(&mut con).await },
            )
            .await;
        if let Ok(on) = shared {
            return on;
        }
    }
    state.legacy_subscriptions.get(digest).await.is_some_and(|s| s.contains(uri))
}
