//! One trusted issuer's signing keys: found through its metadata (RFC 8414, then OpenID
//! Connect Discovery) unless configured, cached, refreshed in the background, and refreshed
//! on an unknown `kid` at most once per `min_interval`, so a flood of made-up `kid`s cannot
//! hammer the issuer. A failed fetch keeps the keys already known: tokens keep verifying
//! while the issuer is unreachable.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::Rejection;
use crate::config::IssuerConfig;

/// Largest metadata or key-set document read.
const MAX_DOCUMENT_BYTES: usize = 512 * 1024;

/// A verification key and the algorithms it may verify: taken from the key (its `alg`, else
/// its type and curve), never from a token.
pub struct Key {
    pub(super) decoding: DecodingKey,
    pub(super) algorithms: Vec<Algorithm>,
}

#[derive(Default)]
struct KeySet {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`, tried for tokens without one.
    anonymous: Vec<Arc<Key>>,
}

/// After a failed fetch, how soon an unknown `kid` may fetch again.
const RETRY_FAILED: Duration = Duration::from_secs(1);

/// One issuer and its cached keys.
pub struct Issuer {
    /// Its configuration.
    pub config: IssuerConfig,
    client: Option<reqwest::Client>,
    keys: ArcSwap<KeySet>,
    /// When the last fetch started: at most one fetch per `min_interval` for unknown `kid`s.
    last_fetch: Mutex<Option<Instant>>,
    jwks_uri: Mutex<Option<String>>,
    fetches: AtomicU64,
    /// The last fetch failed: an unknown `kid` may be a key not fetched yet.
    failing: AtomicBool,
}

impl Issuer {
    /// Builds the issuer and starts its background refresh (first fetch at once); the task
    /// ends when the issuer is dropped (a reload replaced it).
    pub fn start(config: IssuerConfig) -> Arc<Self> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| tracing::error!(issuer = %config.issuer, error = %e, "no HTTP client for the issuer's keys"))
            .ok();
        let issuer = Arc::new(Self {
            jwks_uri: Mutex::new(config.jwks_uri.clone()),
            config,
            client,
            keys: ArcSwap::default(),
            last_fetch: Mutex::new(None),
            fetches: AtomicU64::new(0),
            failing: AtomicBool::new(false),
        });
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(refresh_loop(Arc::downgrade(&issuer)));
        }
        issuer
    }

    /// Key-set fetches attempted so far.
    pub fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The key for `kid`; an unknown one triggers a refresh when the last fetch is older than
    /// `min_interval`. Not there: [`Rejection::UnknownKey`], or [`Rejection::KeysUnavailable`]
    /// while the issuer's key set cannot be fetched (a person reading the error then looks at
    /// the issuer, not at the token).
    pub async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, Rejection> {
        if let Some(k) = self.cached(kid) {
            return Ok(k);
        }
        {
            // While fetching fails (an issuer slow to start, or down for a moment), a caller's
            // unknown `kid` may try again after a second rather than `min_interval`.
            let failing = self.failing.load(Ordering::Relaxed);
            let wait = if failing { self.config.min_interval.min(RETRY_FAILED) } else { self.config.min_interval };
            let mut last = self.last_fetch.lock().await;
            if !last.is_some_and(|t| t.elapsed() < wait) {
                *last = Some(Instant::now());
                self.fetch().await;
            }
        }
        self.cached(kid).ok_or_else(|| {
            if self.failing.load(Ordering::Relaxed) { Rejection::KeysUnavailable } else { Rejection::UnknownKey }
        })
    }

    fn cached(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        let keys = self.keys.load();
        match kid {
            Some(kid) => keys.by_kid.get(kid).cloned(),
            None if keys.anonymous.len() + keys.by_kid.len() == 1 => {
                keys.anonymous.first().or_else(|| keys.by_kid.values().next()).cloned()
            }
            None => None,
        }
    }

    /// Fetches the key set and swaps it in; on failure logs, keeps the old one and says so.
    async fn fetch(&self) -> bool {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        match self.load().await {
            Ok(set) => {
                tracing::debug!(issuer = %self.config.issuer, keys = set.by_kid.len() + set.anonymous.len(), "key set fetched");
                self.keys.store(Arc::new(set));
                self.failing.store(false, Ordering::Relaxed);
                true
            }
            Err(e) => {
                self.failing.store(true, Ordering::Relaxed);
                tracing::warn!(
                    issuer = %self.config.issuer,
                    error = %e,
                    "could not fetch the issuer's key set; keeping the keys already known"
                );
                false
            }
        }
    }

    async fn load(&self) -> Result<KeySet, String> {
        let client = self.client.as_ref().ok_or("no HTTP client")?;
        let uri = {
            let mut uri = self.jwks_uri.lock().await;
            if uri.is_none() {
                *uri = Some(self.discover(client).await?);
            }
            uri.clone().expect("set above")
        };
        let doc = get_json(client, &uri).await?;
        let keys = doc.get("keys").and_then(Value::as_array).ok_or_else(|| format!("{uri}: no \"keys\" array"))?;
        let mut set = KeySet::default();
        for jwk in keys {
            match key_of(jwk) {
                Ok(Some((kid, key))) => match kid {
                    Some(kid) => drop(set.by_kid.insert(kid, Arc::new(key))),
                    None => set.anonymous.push(Arc::new(key)),
                },
                Ok(None) => {}
                Err(e) => tracing::warn!(issuer = %self.config.issuer, error = %e, "skipping a key of the key set"),
            }
        }
        Ok(set)
    }

    /// The `jwks_uri` from the issuer's metadata ([`metadata`]).
    async fn discover(&self, client: &reqwest::Client) -> Result<String, String> {
        let doc = metadata(client, &self.config.issuer, &["jwks_uri"]).await?;
        Ok(doc["jwks_uri"].as_str().unwrap_or_default().to_owned())
    }
}

/// An authorization server's metadata with the URL members `needs` names: RFC 8414 §3.1 first
/// (well-known segment between host and path), then OpenID Connect Discovery §4 (appended to
/// the issuer). Its `issuer` must be the one asked about (RFC 8414 §3.3).
pub async fn metadata(client: &reqwest::Client, issuer: &str, needs: &[&str]) -> Result<Value, String> {
    let trimmed = issuer.trim_end_matches('/');
    let origin_end = trimmed.find("://").map_or(0, |i| i + 3);
    let host_end = trimmed[origin_end..].find('/').map_or(trimmed.len(), |i| origin_end + i);
    let candidates = [
        format!("{}/.well-known/oauth-authorization-server{}", &trimmed[..host_end], &trimmed[host_end..]),
        format!("{trimmed}/.well-known/openid-configuration"),
    ];
    let mut last = String::new();
    for url in candidates {
        match get_json(client, &url).await {
            Ok(doc) if doc.get("issuer").and_then(Value::as_str) != Some(issuer) => {
                last = format!("{url}: its issuer is not {issuer}");
            }
            Ok(doc) => match needs.iter().find(|k| doc.get(**k).and_then(Value::as_str).is_none()) {
                Some(missing) => last = format!("{url}: no {missing}"),
                None => return Ok(doc),
            },
            Err(e) => last = e,
        }
    }
    Err(format!("no usable authorization server metadata ({last})"))
}

async fn refresh_loop(issuer: Weak<Issuer>) {
    loop {
        let Some(strong) = issuer.upgrade() else { return };
        let fetched = {
            // Held while fetching, as `key` does: a token whose `kid` this fetch brings (the
            // first fetch of a replica just started, or a rotation) waits for it instead of
            // being refused while it is in flight.
            let mut last = strong.last_fetch.lock().await;
            *last = Some(Instant::now());
            strong.fetch().await
        };
        // A failed fetch (issuer not up yet, or down) is retried sooner than the refresh period.
        let period =
            if fetched { strong.config.refresh } else { strong.config.min_interval.min(strong.config.refresh) };
        drop(strong);
        tokio::time::sleep(period).await;
    }
}

async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let res = client.get(url).header("accept", "application/json").send().await.map_err(|e| format!("{url}: {e}"))?;
    if !res.status().is_success() {
        return Err(format!("{url}: HTTP {}", res.status()));
    }
    if res.content_length().is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64) {
        return Err(format!("{url}: document larger than {MAX_DOCUMENT_BYTES} bytes"));
    }
    let body = res.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    if body.len() > MAX_DOCUMENT_BYTES {
        return Err(format!("{url}: document larger than {MAX_DOCUMENT_BYTES} bytes"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON ({e})"))
}

/// A signing key of a key set with its `kid`; `None` for keys that are not for signatures
/// (`use: enc`) or not of a supported type.
fn key_of(jwk: &Value) -> Result<Option<(Option<String>, Key)>, String> {
    if jwk.get("use").and_then(Value::as_str).is_some_and(|u| u != "sig") {
        return Ok(None);
    }
    let jwk: Jwk = match serde_json::from_value(jwk.clone()) {
        Ok(j) => j,
        // Types jsonwebtoken does not know (e.g. future ones) are not an error of the set.
        Err(_) if jwk.get("kty").and_then(Value::as_str).is_some_and(|k| !matches!(k, "RSA" | "EC" | "OKP")) => {
            return Ok(None);
        }
        Err(e) => return Err(format!("unreadable JWK: {e}")),
    };
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return Ok(None);
    }
    let algorithms = match (jwk.common.key_algorithm, &jwk.algorithm) {
        (Some(alg), _) => vec![algorithm(alg).ok_or_else(|| format!("unsupported key alg {alg:?}"))?],
        (None, AlgorithmParameters::RSA(_)) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        (None, AlgorithmParameters::EllipticCurve(ec)) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return Ok(None),
        },
        (None, AlgorithmParameters::OctetKeyPair(_)) => vec![Algorithm::EdDSA],
        // Symmetric keys in a public key set are never trusted.
        (None, AlgorithmParameters::OctetKey(_)) => return Ok(None),
    };
    let decoding = DecodingKey::from_jwk(&jwk).map_err(|e| format!("unusable JWK: {e}"))?;
    Ok(Some((jwk.common.key_id, Key { decoding, algorithms })))
}

/// The asymmetric signature algorithms; HMAC never verifies a token against a public key.
fn algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

#[cfg(test)]
pub(super) fn test_issuer(config: IssuerConfig, keys: Vec<(String, Value)>) -> Arc<Issuer> {
    let mut set = KeySet::default();
    for (kid, jwk) in keys {
        let (_, key) = key_of(&jwk).unwrap().unwrap();
        set.by_kid.insert(kid, Arc::new(key));
    }
    Arc::new(Issuer {
        jwks_uri: Mutex::new(config.jwks_uri.clone()),
        config,
        client: None,
        keys: ArcSwap::from_pointee(set),
        last_fetch: Mutex::new(Some(Instant::now())),
        fetches: AtomicU64::new(0),
        failing: AtomicBool::new(false),
    })
}
