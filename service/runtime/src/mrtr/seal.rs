//! Sealed `requestState` (MCP 2026-07-28 basic/patterns/mrtr § requestState integrity, our choice where the spec leaves it open): AES-256-GCM with a key ring, so any
//! replica holding the ring can continue any MRTR round and no replica stores anything.
//!
//! Token: `v1.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>`; the `v1.<key id>` prefix is the
//! AEAD's associated data (legacy session ids use the same ring with the purpose `s1`). The sealed JSON binds the method, the target (tool/prompt name or
//! resource URI), a digest of the arguments, the caller and an expiry.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::digest::{Context, SHA256};
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::RequestStateConfig;

const VERSION: &str = "v1";

/// What a sealed state is bound to; the retry must present the same.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// Tool or prompt name, or resource URI.
    pub target: &'a str,
    /// The request's arguments (`Null` for `resources/read`).
    pub arguments: &'a Value,
    /// The authenticated caller, if any.
    pub principal: Option<&'a str>,
    /// The virtual endpoint the request came to (`None`: `server.path`).
    pub endpoint: Option<&'a str>,
}

/// Why a `requestState` was refused. Each message says which check failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Over `request_state.max_bytes`.
    #[error("requestState is larger than this server accepts")]
    TooLarge,
    /// Not a token this server could have minted.
    #[error("requestState is malformed: echo the exact string the server sent")]
    Malformed,
    /// A key id not in the ring (another deployment, or a retired key).
    #[error("requestState was sealed with key '{0}', which this server does not hold")]
    UnknownKey(String),
    /// Authentication failed: modified, or sealed by a different key with the same id.
    #[error("requestState failed its integrity check (it was modified or sealed by another server)")]
    Integrity,
    /// Past its expiry.
    #[error("requestState has expired; start the request again without it")]
    Expired,
    /// Minted for another method or target.
    #[error("requestState was issued for {0}, not for this request")]
    WrongRequest(String),
    /// Minted for other arguments.
    #[error("requestState was issued for different arguments")]
    WrongArguments,
    /// Minted for another caller.
    #[error("requestState was issued to a different caller")]
    WrongCaller,
    /// Minted on another endpoint (`[[endpoints]]`).
    #[error("requestState was issued by another endpoint of this server")]
    WrongEndpoint,
}

/// The sealed plaintext, as written (borrowing everything).
#[derive(Serialize)]
struct PayloadOut<'a> {
    exp: u64,
    m: &'a str,
    t: &'a str,
    d: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    p: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    e: Option<&'a str>,
    s: &'a Value,
}

/// The sealed plaintext, as read back.
#[derive(Deserialize)]
struct PayloadIn<'a> {
    exp: u64,
    #[serde(borrow)]
    m: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    t: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    d: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    p: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    e: Option<std::borrow::Cow<'a, str>>,
    s: Value,
}

/// Seals and opens request states with the configured key ring.
pub struct Sealer {
    active: String,
    keys: HashMap<String, LessSafeKey>,
    ttl: Duration,
    max_bytes: usize,
    rng: SystemRandom,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer").field("active", &self.active).field("keys", &self.keys.len()).finish()
    }
}

impl Sealer {
    /// From `[request_state]`. Without keys, a random per-process key (logged as a warning:
    /// MRTR rounds then only work when one replica serves every round).
    pub fn new(config: &RequestStateConfig) -> Self {
        let sealer = Self::ring(&config.keys, config.ttl, config.max_bytes);
        if config.keys.is_empty() {
            tracing::warn!(
                key_id = %sealer.active,
                "no request_state.keys configured: using a random per-process key; MRTR retries that reach another replica will be refused"
            );
        }
        sealer
    }

    /// A sealer over `keys` (`(id, 32-byte key)`, the first seals); empty: a random key of
    /// this process alone, named `ephemeral-<hex>`.
    pub fn ring(keys: &[(String, mcp_adapter_api::Secret)], ttl: Duration, max_bytes: usize) -> Self {
        let rng = SystemRandom::new();
        let mut ring_keys: Vec<(String, Vec<u8>)> =
            keys.iter().map(|(id, secret)| (id.clone(), secret.expose().to_vec())).collect();
        if ring_keys.is_empty() {
            let mut bytes = vec![0u8; 32];
            rng.fill(&mut bytes).expect("system randomness");
            let mut id = [0u8; 4];
            rng.fill(&mut id).expect("system randomness");
            let id = format!("ephemeral-{}", id.iter().map(|b| format!("{b:02x}")).collect::<String>());
            ring_keys.push((id, bytes));
        }
        let active = ring_keys[0].0.clone();
        let keys = ring_keys
            .into_iter()
            .map(|(id, bytes)| {
                let key = UnboundKey::new(&AES_256_GCM, &bytes).expect("32-byte key (checked at config load)");
                (id, LessSafeKey::new(key))
            })
            .collect();
        Self { active, keys, ttl, max_bytes, rng }
    }

    /// Seconds since the epoch at which what is sealed now expires.
    pub fn expiry(&self) -> u64 {
        now_secs() + self.ttl.as_secs()
    }

    /// Seals `state` bound to `binding`.
    pub fn seal(&self, binding: &Binding<'_>, state: &Value) -> String {
        let digest = digest_b64(binding.arguments);
        let principal = binding.principal.map(principal_b64);
        let payload = PayloadOut {
            exp: self.expiry(),
            m: binding.method,
            t: binding.target,
            d: &digest,
            p: principal.as_deref(),
            e: binding.endpoint,
            s: state,
        };
        let plain = serde_json::to_vec(&payload).expect("serializable state");
        self.seal_bytes(VERSION, &plain)
    }

    /// Seals `plain` under the active key as `<purpose>.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>`;
    /// `<purpose>.<key id>` is the associated data, so a token minted for one purpose (a
    /// `requestState`, a legacy session id) never opens as another.
    pub fn seal_bytes(&self, purpose: &str, plain: &[u8]) -> String {
        let mut buf = Vec::with_capacity(NONCE_LEN + plain.len() + 16);
        buf.resize(NONCE_LEN, 0);
        self.rng.fill(&mut buf).expect("system randomness");
        let nonce = Nonce::try_assume_unique_for_key(&buf[..NONCE_LEN]).expect("nonce length");
        let prefix = format!("{purpose}.{}", self.active);
        let mut body = plain.to_vec();
        self.keys[&self.active]
            .seal_in_place_append_tag(nonce, Aad::from(prefix.as_bytes()), &mut body)
            .expect("sealing cannot fail for in-memory buffers");
        buf.extend_from_slice(&body);
        let mut token = prefix;
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&buf, &mut token);
        token
    }

    /// Opens a token sealed by [`Sealer::seal_bytes`] for `purpose` (size, key id and integrity
    /// checked; what the plaintext means is the caller's).
    pub fn open_bytes(&self, purpose: &str, token: &str) -> Result<Vec<u8>, StateError> {
        if token.len() > self.max_bytes {
            return Err(StateError::TooLarge);
        }
        let mut parts = token.splitn(3, '.');
        let (Some(p), Some(kid), Some(data)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(StateError::Malformed);
        };
        if p != purpose {
            return Err(StateError::Malformed);
        }
        let key = self.keys.get(kid).ok_or_else(|| StateError::UnknownKey(kid.to_owned()))?;
        let mut raw = URL_SAFE_NO_PAD.decode(data).map_err(|_| StateError::Malformed)?;
        if raw.len() < NONCE_LEN + AES_256_GCM.tag_len() {
            return Err(StateError::Malformed);
        }
        let mut body = raw.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&raw).map_err(|_| StateError::Malformed)?;
        let prefix_len = purpose.len() + 1 + kid.len();
        let plain = key
            .open_in_place(nonce, Aad::from(&token.as_bytes()[..prefix_len]), &mut body)
            .map_err(|_| StateError::Integrity)?;
        let len = plain.len();
        body.truncate(len);
        Ok(body)
    }

    /// Opens a token and checks it against `binding`; returns the sealed state.
    pub fn open(&self, token: &str, binding: &Binding<'_>) -> Result<Value, StateError> {
        let plain = self.open_bytes(VERSION, token)?;
        let payload: PayloadIn<'_> = serde_json::from_slice(&plain).map_err(|_| StateError::Integrity)?;
        if payload.exp < now_secs() {
            return Err(StateError::Expired);
        }
        if payload.m != binding.method || payload.t != binding.target {
            return Err(StateError::WrongRequest(format!("{} '{}'", payload.m, payload.t)));
        }
        if payload.d != digest_b64(binding.arguments) {
            return Err(StateError::WrongArguments);
        }
        if payload.p.as_deref() != binding.principal.map(principal_b64).as_deref() {
            return Err(StateError::WrongCaller);
        }
        if payload.e.as_deref() != binding.endpoint {
            return Err(StateError::WrongEndpoint);
        }
        Ok(payload.s)
    }
}

/// Unix seconds (the expiry clock of sealed tokens).
pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The caller is stored hashed: the token is encrypted anyway, but this keeps it short.
fn principal_b64(principal: &str) -> String {
    URL_SAFE_NO_PAD.encode(ring::digest::digest(&SHA256, principal.as_bytes()))
}

/// SHA-256 of the canonical form of `value` (object keys sorted at every level), so the
/// digest does not depend on the order the client wrote the keys in.
pub fn digest_b64(value: &Value) -> String {
    let mut ctx = Context::new(&SHA256);
    canonical(value, &mut ctx);
    URL_SAFE_NO_PAD.encode(ctx.finish())
}

fn canonical(value: &Value, ctx: &mut Context) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            ctx.update(b"{");
            for k in keys {
                write_json(k, ctx);
                ctx.update(b":");
                canonical(&map[k], ctx);
                ctx.update(b",");
            }
            ctx.update(b"}");
        }
        Value::Array(items) => {
            ctx.update(b"[");
            for v in items {
                canonical(v, ctx);
                ctx.update(b",");
            }
            ctx.update(b"]");
        }
        other => write_json(other, ctx),
    }
}

/// Feeds the JSON text of `value` to the digest without an intermediate string.
fn write_json<T: Serialize + ?Sized>(value: &T, ctx: &mut Context) {
    struct Sink<'c>(&'c mut Context);
    impl std::io::Write for Sink<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Sink(ctx), value).expect("JSON to a digest cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;
    use serde_json::json;

    fn sealer(keys: &[(&str, u8)]) -> Sealer {
        Sealer::new(&RequestStateConfig {
            ttl: Duration::from_secs(60),
            max_bytes: 4096,
            keys: keys.iter().map(|(id, b)| ((*id).to_owned(), Secret::new(vec![*b; 32]))).collect(),
        })
    }

    fn binding<'a>(args: &'a Value) -> Binding<'a> {
        Binding { method: "tools/call", target: "t", arguments: args, principal: None, endpoint: None }
    }

    #[test]
    fn round_trip_and_rotation() {
        let args = json!({"b": 1, "a": [1, 2]});
        let old = sealer(&[("k1", 1)]);
        let token = old.seal(&binding(&args), &json!({"round": 1}));
        assert!(token.starts_with("v1.k1."));
        let reordered = json!({"a": [1, 2], "b": 1});
        assert_eq!(old.open(&token, &binding(&reordered)).unwrap(), json!({"round": 1}));
        // The new ring seals with k2 but still opens k1 tokens.
        let rotated = sealer(&[("k2", 2), ("k1", 1)]);
        assert_eq!(rotated.open(&token, &binding(&args)).unwrap(), json!({"round": 1}));
        assert!(rotated.seal(&binding(&args), &json!(null)).starts_with("v1.k2."));
    }

    #[test]
    fn every_failure_says_which() {
        let args = json!({"x": 1});
        let s = sealer(&[("k1", 1)]);
        let token = s.seal(&binding(&args), &json!({}));
        let mut tampered = token.clone().into_bytes();
        let last = tampered.len() - 3;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(s.open(&tampered, &binding(&args)), Err(StateError::Integrity));
        assert_eq!(sealer(&[("k1", 9)]).open(&token, &binding(&args)), Err(StateError::Integrity));
        assert_eq!(sealer(&[("other", 1)]).open(&token, &binding(&args)), Err(StateError::UnknownKey("k1".into())));
        assert_eq!(s.open("garbage", &binding(&args)), Err(StateError::Malformed));
        assert_eq!(s.open("v1.k1.!!!", &binding(&args)), Err(StateError::Malformed));
        assert_eq!(s.open(&token, &binding(&json!({"x": 2}))), Err(StateError::WrongArguments));
        let other = Binding { target: "u", ..binding(&args) };
        assert!(matches!(s.open(&token, &other), Err(StateError::WrongRequest(_))));
        let caller = Binding { principal: Some("alice"), ..binding(&args) };
        let elsewhere = Binding { endpoint: Some("/mcp/support"), ..binding(&args) };
        assert_eq!(s.open(&token, &caller), Err(StateError::WrongCaller));
        assert_eq!(s.open(&token, &elsewhere), Err(StateError::WrongEndpoint));
        let there = s.seal(&elsewhere, &json!({}));
        assert_eq!(s.open(&there, &binding(&args)), Err(StateError::WrongEndpoint));
        let expired = Sealer { ttl: Duration::ZERO, ..sealer(&[("k1", 1)]) };
        let old = expired.seal(&binding(&args), &json!({}));
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(expired.open(&old, &binding(&args)), Err(StateError::Expired));
    }
}
