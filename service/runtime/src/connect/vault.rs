//! The vault: each caller's grant at each upstream, sealed with AES-256-GCM under the vault's
//! own key ring (`[user_auth] vault_keys`), in Redis with `[redis]` (every replica sees every
//! connection) and in this process's memory without. A sealed entry names its caller and
//! upstream inside the ciphertext, so an entry copied into another slot does not open there.
//! Opened grants are kept here for [`LOCAL_FOR`], so a call with a stored token reads nothing
//! remote.

use std::sync::Arc;
use std::time::Duration;

use ring::digest::{SHA256, digest};
use serde::{Deserialize, Serialize};

use super::oauth::Grant;
use crate::cluster::redis::Redis;
use crate::mrtr::{Sealer, StateError};

/// How long an opened grant is used without reading the store again: a connection removed on
/// another replica is still used here for at most this long (the upstream's refusal of a
/// revoked token removes it at once).
pub const LOCAL_FOR: Duration = Duration::from_secs(30);

/// How long one replica may hold a slot's refresh before another may take it over.
const REFRESH_LEASE: Duration = Duration::from_secs(10);

/// Sealing purpose of vault entries.
const PURPOSE: &str = "vault1";

/// One slot's sealed content.
#[derive(Serialize, Deserialize)]
struct Entry {
    /// The caller's key (`issuer#subject`).
    c: String,
    /// The upstream's name.
    u: String,
    g: Grant,
}

/// Why an entry was not usable (logged; the caller is asked to connect again).
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// Sealed with a key this replica's ring does not hold, or modified.
    #[error("the entry {0}")]
    Sealed(String),
    /// Opened, but made for another slot.
    #[error("the entry belongs to another caller or upstream")]
    Misplaced,
    /// The store did not answer.
    #[error("redis is unavailable")]
    Unavailable,
}

/// The vault (see the module).
pub struct Vault {
    sealer: Sealer,
    redis: Option<Arc<Redis>>,
    /// Without Redis: the sealed entries.
    memory: moka::sync::Cache<String, Arc<str>>,
    /// Opened grants, by slot.
    local: moka::sync::Cache<String, Arc<Grant>>,
    /// This replica's refreshes in flight, by slot.
    refreshing: moka::sync::Cache<String, Arc<tokio::sync::Mutex<()>>>,
    ttl: Duration,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("redis", &self.redis.is_some()).finish_non_exhaustive()
    }
}

impl Vault {
    /// A vault sealing with `sealer`, keeping entries `ttl` (renewed when written).
    pub fn new(sealer: Sealer, redis: Option<Arc<Redis>>, ttl: Duration) -> Self {
        Self {
            sealer,
            redis,
            memory: moka::sync::Cache::builder().max_capacity(1_000_000).time_to_live(ttl).build(),
            local: moka::sync::Cache::builder().max_capacity(100_000).time_to_live(LOCAL_FOR).build(),
            refreshing: moka::sync::Cache::builder().max_capacity(100_000).time_to_idle(REFRESH_LEASE).build(),
            ttl,
        }
    }

    /// The slot of `caller` at `upstream` in the store: the caller hashed, so keys in Redis
    /// name no one.
    fn slot(caller: &str, upstream: &str) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut slot = String::with_capacity(upstream.len() + 71);
        slot.push_str("vault:");
        slot.push_str(upstream);
        slot.push(':');
        for b in digest(&SHA256, caller.as_bytes()).as_ref() {
            slot.push(char::from(HEX[usize::from(b >> 4)]));
            slot.push(char::from(HEX[usize::from(b & 15)]));
        }
        slot
    }

    /// This replica's key of an opened grant (no hashing: it never leaves the process).
    fn local_key(caller: &str, upstream: &str) -> String {
        let mut key = String::with_capacity(upstream.len() + 1 + caller.len());
        key.push_str(upstream);
        key.push('\0');
        key.push_str(caller);
        key
    }

    /// The grant of `caller` at `upstream`, if connected.
    pub async fn get(&self, caller: &str, upstream: &str) -> Result<Option<Arc<Grant>>, VaultError> {
        let local = Self::local_key(caller, upstream);
        if let Some(g) = self.local.get(&local) {
            return Ok(Some(g));
        }
        let slot = Self::slot(caller, upstream);
        let sealed = match &self.redis {
            Some(redis) => {
                let key = redis.key(&slot);
                let got = redis
                    .call(|mut con| async move { redis::AsyncCommands::get::<_, Option<String>>(&mut con, &key).await })
                    .await;
                got.map_err(|_| VaultError::Unavailable)?.map(Arc::from)
            }
            None => self.memory.get(&slot),
        };
        let Some(sealed) = sealed else { return Ok(None) };
        let plain = self.sealer.open_bytes(PURPOSE, &sealed).map_err(|e| {
            VaultError::Sealed(match e {
                StateError::UnknownKey(id) => {
                    format!("was sealed with key '{id}', which is not in this replica's vault_keys")
                }
                StateError::Integrity => {
                    "failed its integrity check (changed, or sealed by another deployment)".to_owned()
                }
                _ => "is not a sealed vault entry".to_owned(),
            })
        })?;
        let entry: Entry =
            serde_json::from_slice(&plain).map_err(|_| VaultError::Sealed("has unreadable content".to_owned()))?;
        if entry.c != caller || entry.u != upstream {
            return Err(VaultError::Misplaced);
        }
        let grant = Arc::new(entry.g);
        self.local.insert(local, Arc::clone(&grant));
        Ok(Some(grant))
    }

    /// Stores `grant` for `caller` at `upstream` (replacing what was there).
    pub async fn put(&self, caller: &str, upstream: &str, grant: Grant) -> Result<(), VaultError> {
        let slot = Self::slot(caller, upstream);
        let entry = Entry { c: caller.to_owned(), u: upstream.to_owned(), g: grant };
        let sealed = self.sealer.seal_bytes(PURPOSE, &serde_json::to_vec(&entry).expect("serializable entry"));
        match &self.redis {
            Some(redis) => {
                let key = redis.key(&slot);
                let ttl = self.ttl.as_secs();
                redis
                    .call(|mut con| async move {
                        redis::AsyncCommands::set_ex::<_, _, ()>(&mut con, &key, sealed, ttl).await
                    })
                    .await
                    .map_err(|_| VaultError::Unavailable)?;
            }
            None => self.memory.insert(slot, Arc::from(sealed)),
        }
        self.local.insert(Self::local_key(caller, upstream), Arc::new(entry.g));
        Ok(())
    }

    /// Removes the connection of `caller` at `upstream` (revoked, refused or disconnected).
    pub async fn delete(&self, caller: &str, upstream: &str) -> Result<(), VaultError> {
        self.local.invalidate(&Self::local_key(caller, upstream));
        let slot = Self::slot(caller, upstream);
        match &self.redis {
            Some(redis) => {
                let key = redis.key(&slot);
                redis
                    .call(|mut con| async move { redis::AsyncCommands::del::<_, ()>(&mut con, &key).await })
                    .await
                    .map_err(|_| VaultError::Unavailable)
            }
            None => {
                self.memory.invalidate(&slot);
                Ok(())
            }
        }
    }

    /// Forgets this replica's opened copy (the next [`Self::get`] reads the store).
    pub fn forget_local(&self, caller: &str, upstream: &str) {
        self.local.invalidate(&Self::local_key(caller, upstream));
    }

    /// Runs `refresh` as the one refresh of this slot in the cluster: this replica's other
    /// callers wait for it, and with Redis a lease (`SET NX PX`) keeps other replicas out; a
    /// caller that did not get the lease returns `None` and reads the store again later.
    pub async fn refresh_once<F, Fut, T>(&self, caller: &str, upstream: &str, refresh: F) -> Option<T>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        let slot = Self::slot(caller, upstream);
        let lock = self.refreshing.get_with(slot.clone(), Arc::default);
        let _held = lock.lock().await;
        // Another call on this replica may have refreshed while this one waited.
        self.local.invalidate(&Self::local_key(caller, upstream));
        if let Some(redis) = &self.redis
            && redis.claim(&format!("{slot}:refresh"), REFRESH_LEASE).await != Ok(true)
        {
            return None;
        }
        Some(refresh().await)
    }
}
