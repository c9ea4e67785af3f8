//! The vault: each caller's grant at each upstream, sealed with AES-256-GCM under the vault's
//! own key ring (`[user_auth] vault_keys`), in Redis with `[redis]` (every replica sees every
//! connection) and in this process's memory without. A sealed entry names its caller and
//! upstream inside the ciphertext, so an entry copied into another slot does not open there.
//! Opened grants are kept here for [`LOCAL_FOR`], so a call with a stored token reads nothing
//! remote. With Redis, an index (one hash, its values sealed too) lists the connections for the
//! console without naming anyone in clear.

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

/// Sealing purpose of the index's values.
const LISTED: &str = "vaultidx1";

/// The index's key in Redis: a hash of slot → sealed [`Listed`].
const INDEX: &str = "vault:index";

/// One slot's sealed content.
#[derive(Serialize, Deserialize)]
struct Entry {
    /// The caller's key (`issuer#subject`).
    c: String,
    /// The upstream's name.
    u: String,
    g: Grant,
}

/// One connection as the console shows it: who, where, since when; never a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    /// The caller (`issuer#subject`).
    pub caller: String,
    /// The `[[upstream_auth]]` name.
    pub upstream: String,
    /// When the caller connected (ms since the epoch).
    pub connected_at_ms: u64,
    /// When the current access token expires, if the server said.
    pub expires_at_ms: Option<u64>,
    /// Whether it can be refreshed (a refresh token was granted).
    pub refreshable: bool,
}

/// An index value's sealed content: the connection without its tokens, and when the slot
/// lapses (its entries are written with a TTL; the index's are removed when read after it).
#[derive(Serialize, Deserialize)]
struct Listed {
    c: String,
    u: String,
    s: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<u64>,
    r: bool,
    until: u64,
}

impl Listed {
    fn of(entry: &Entry, until: u64) -> Self {
        Self {
            c: entry.c.clone(),
            u: entry.u.clone(),
            s: entry.g.connected_at_ms,
            e: entry.g.expires_at_ms,
            r: entry.g.refresh_token.is_some(),
            until,
        }
    }

    fn connection(self) -> Connection {
        Connection {
            caller: self.c,
            upstream: self.u,
            connected_at_ms: self.s,
            expires_at_ms: self.e,
            refreshable: self.r,
        }
    }
}

/// Every connection the vault holds, and how many entries this replica's keys cannot open
/// (sealed under a key not in its ring: during a rotation, or another deployment's).
#[derive(Debug, Default)]
pub struct Listing {
    /// By caller, then upstream.
    pub connections: Vec<Connection>,
    /// Entries not opened.
    pub sealed_elsewhere: usize,
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
                let until = crate::clock::now_ms().saturating_add(self.ttl.as_millis() as u64);
                let listed = self
                    .sealer
                    .seal_bytes(LISTED, &serde_json::to_vec(&Listed::of(&entry, until)).expect("serializable listing"));
                let index = redis.key(INDEX);
                redis
                    .call(|mut con| async move {
                        redis::AsyncCommands::set_ex::<_, _, ()>(&mut con, &key, sealed, ttl).await?;
                        redis::AsyncCommands::hset::<_, _, _, ()>(&mut con, &index, &slot, listed).await
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
                let index = redis.key(INDEX);
                redis
                    .call(|mut con| async move {
                        redis::AsyncCommands::del::<_, ()>(&mut con, &key).await?;
                        redis::AsyncCommands::hdel::<_, _, ()>(&mut con, &index, &slot).await
                    })
                    .await
                    .map_err(|_| VaultError::Unavailable)
            }
            None => {
                self.memory.invalidate(&slot);
                Ok(())
            }
        }
    }

    /// Every connection held (for the console: no token leaves this function). With Redis, from
    /// the index, whose lapsed values are removed on the way; without, from memory.
    pub async fn list(&self) -> Result<Listing, VaultError> {
        let mut listing = Listing::default();
        match &self.redis {
            Some(redis) => {
                let index = redis.key(INDEX);
                let read = index.clone();
                let all = redis
                    .call(|mut con| async move {
                        redis::AsyncCommands::hgetall::<_, Vec<(String, String)>>(&mut con, &read).await
                    })
                    .await
                    .map_err(|_| VaultError::Unavailable)?;
                let now = crate::clock::now_ms();
                let mut lapsed = Vec::new();
                for (slot, sealed) in all {
                    let listed = self.sealer.open_bytes(LISTED, &sealed).ok().and_then(|plain| {
                        serde_json::from_slice::<Listed>(&plain).ok().filter(|l| Self::slot(&l.c, &l.u) == slot)
                    });
                    match listed {
                        Some(l) if l.until <= now => lapsed.push(slot),
                        Some(l) => listing.connections.push(l.connection()),
                        None => listing.sealed_elsewhere += 1,
                    }
                }
                if !lapsed.is_empty() {
                    let _ = redis
                        .call(|mut con| async move {
                            redis::AsyncCommands::hdel::<_, _, ()>(&mut con, &index, lapsed).await
                        })
                        .await;
                }
            }
            None => {
                for (slot, sealed) in &self.memory {
                    let entry = self.sealer.open_bytes(PURPOSE, &sealed).ok().and_then(|plain| {
                        serde_json::from_slice::<Entry>(&plain).ok().filter(|e| Self::slot(&e.c, &e.u) == *slot)
                    });
                    match entry {
                        Some(e) => listing.connections.push(Listed::of(&e, 0).connection()),
                        None => listing.sealed_elsewhere += 1,
                    }
                }
            }
        }
        listing.connections.sort_by(|a, b| (&a.caller, &a.upstream).cmp(&(&b.caller, &b.upstream)));
        Ok(listing)
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
