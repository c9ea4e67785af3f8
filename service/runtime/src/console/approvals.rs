//! Definition approvals from the console (`[pinning]`): an administrator approves the
//! current digest of a definition that differs from its pin, and the registry is rebuilt with
//! it served. With `[redis]` the approval goes to a Redis hash every replica reads back every
//! [`SYNC_EVERY`], so the cluster agrees within that; without, it holds on this replica. The
//! lock file stays the record to review: `mcp-runtime pin` writes the approved definitions
//! into it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::registry::pins::digest;
use crate::state::AppState;

/// How often each replica reads the cluster's approvals.
pub const SYNC_EVERY: Duration = Duration::from_secs(2);

/// Why an approval was refused.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// No served or withheld definition has that key now, or it matches its pin already.
    #[error("'{0}' is no definition awaiting approval (it may have been pinned or changed meanwhile)")]
    NotPending(String),
    /// The definition changed since the page showed it.
    #[error("'{0}' changed since it was shown: look at it again before approving it")]
    Changed(String),
    /// Redis did not take it.
    #[error("the approval could not be stored in Redis (down or erroring); nothing was approved")]
    Store,
}

/// Approves the definition at `key` whose digest the administrator saw as `sha256`.
pub async fn approve(state: &AppState, key: &str, sha256: &str) -> Result<(), Refused> {
    let registry = state.registry.load_full();
    let pending = registry.unpinned.iter().find(|u| u.key == key).ok_or_else(|| Refused::NotPending(key.to_owned()))?;
    if digest(&pending.current) != sha256 {
        return Err(Refused::Changed(key.to_owned()));
    }
    if let Some(redis) = &state.redis {
        let (hash, field, value) = (redis.key("pins:approved"), key.to_owned(), sha256.to_owned());
        redis
            .call(|mut con| async move {
                redis::cmd("HSET").arg(hash).arg(field).arg(value).query_async::<i64>(&mut con).await
            })
            .await
            .map_err(|_| Refused::Store)?;
    }
    registry.config().pinning.approved.insert(key.to_owned(), sha256.to_owned());
    state.events.catalog_handle().signal();
    Ok(())
}

/// With `[redis]` and `[pinning]` on: reads the cluster's approvals every [`SYNC_EVERY`] and
/// rebuilds the registry when they changed, until shutdown.
pub fn spawn_sync(state: &Arc<AppState>) {
    let Some(redis) = state.redis.clone().filter(|_| state.console.is_some()) else { return };
    if state.registry.load().config().pinning.mode.is_none() {
        return;
    }
    let state = Arc::clone(state);
    tokio::spawn(async move {
        let hash = redis.key("pins:approved");
        let mut tick = tokio::time::interval(SYNC_EVERY);
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let hash = hash.clone();
            let Ok(all) = redis
                .call(|mut con| async move {
                    redis::cmd("HGETALL").arg(hash).query_async::<BTreeMap<String, String>>(&mut con).await
                })
                .await
            else {
                continue;
            };
            if state.registry.load().config().pinning.approved.replace(all) {
                state.events.catalog_handle().signal();
            }
        }
    });
}
