//! The security and shared-state sections, validated: `[request_state]` (the key ring),
//! `[redis]` and `[rate_limits]`.

use std::time::Duration;

use base64::Engine as _;
use mcp_adapter_api::{Environment, SecretSource};

use super::{ConfigError, Secret, raw};

/// `[redis]`, validated.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    /// The URL (may carry a password).
    pub url: Secret,
    /// Readiness depends on Redis.
    pub required: bool,
    /// Upper bound of every call.
    pub timeout: Duration,
    /// Circuit-breaker open time.
    pub breaker_open: Duration,
    /// Key and channel prefix.
    pub key_prefix: String,
}

/// `[rate_limits]`, validated.
#[derive(Debug, Clone, Default)]
pub struct RateLimits {
    /// For every tool without its own entry.
    pub default: ToolLimits,
    /// Per tool.
    pub tools: std::collections::BTreeMap<String, ToolLimits>,
}

/// Both limits of one tool (enforced by `cluster::ratelimit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolLimits {
    /// Per caller × tool.
    pub per_caller: Option<Limit>,
    /// Per tool.
    pub global: Option<Limit>,
}

/// `rate` calls per `per`, with bursts of up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Calls per period.
    pub rate: u32,
    /// The period.
    pub per: Duration,
    /// Calls allowed at once.
    pub burst: u32,
}

/// `[request_state]`, validated.
#[derive(Debug, Clone)]
pub struct RequestStateConfig {
    /// Lifetime of a sealed state.
    pub ttl: Duration,
    /// Largest accepted token.
    pub max_bytes: usize,
    /// `(id, 32-byte key)`; the first seals. Empty: a per-process random key.
    pub keys: Vec<(String, Secret)>,
}

pub(super) fn redis(raw: &raw::RawRedis, env: &Environment) -> Result<RedisConfig, ConfigError> {
    let url = SecretSource::new("redis", raw.url_env.as_deref(), raw.url_file.as_deref())
        .stem("url")
        .or_inline(raw.url.as_deref())
        .resolve(env)?;
    if redis::Client::open(url.expose_str()).is_err() {
        return Err(ConfigError::invalid(
            "redis.url",
            "not a usable redis://[:password@]host:port[/db] URL (rediss:// is not supported: use a TLS sidecar)",
        ));
    }
    if raw.timeout_ms == 0 || raw.breaker_open_ms == 0 {
        return Err(ConfigError::invalid("redis", "timeout_ms and breaker_open_ms must be at least 1"));
    }
    Ok(RedisConfig {
        url,
        required: raw.required,
        timeout: Duration::from_millis(raw.timeout_ms),
        breaker_open: Duration::from_millis(raw.breaker_open_ms),
        key_prefix: raw.key_prefix.clone(),
    })
}

pub(super) fn rate_limits(raw: &raw::RawRateLimits) -> Result<RateLimits, ConfigError> {
    let limit = |key: &str, l: Option<raw::RawLimit>| -> Result<Option<Limit>, ConfigError> {
        let Some(l) = l else { return Ok(None) };
        if l.rate == 0 || l.per_ms == 0 || l.burst == Some(0) {
            return Err(ConfigError::invalid(key, "rate, per_ms and burst must be at least 1"));
        }
        Ok(Some(Limit { rate: l.rate, per: Duration::from_millis(l.per_ms), burst: l.burst.unwrap_or(l.rate) }))
    };
    let default = ToolLimits {
        per_caller: limit("rate_limits.per_caller", raw.per_caller)?,
        global: limit("rate_limits.global", raw.global)?,
    };
    let mut tools = std::collections::BTreeMap::new();
    for (name, t) in &raw.tools {
        let per_caller = limit(&format!("rate_limits.tools.{name}.per_caller"), t.per_caller)?.or(default.per_caller);
        let global = limit(&format!("rate_limits.tools.{name}.global"), t.global)?.or(default.global);
        tools.insert(name.clone(), ToolLimits { per_caller, global });
    }
    Ok(RateLimits { default, tools })
}

pub(super) fn request_state(raw: &raw::RawRequestState, env: &Environment) -> Result<RequestStateConfig, ConfigError> {
    if raw.ttl_seconds == 0 {
        return Err(ConfigError::invalid("request_state.ttl_seconds", "must be at least 1"));
    }
    let mut keys: Vec<(String, Secret)> = Vec::with_capacity(raw.keys.len());
    for (i, k) in raw.keys.iter().enumerate() {
        let key = format!("request_state.keys[{i}]");
        if k.id.is_empty() || !k.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(ConfigError::invalid(format!("{key}.id"), "use letters, digits, '-' and '_' only"));
        }
        if keys.iter().any(|(id, _)| *id == k.id) {
            return Err(ConfigError::invalid(format!("{key}.id"), format!("'{}' is used twice", k.id)));
        }
        let text = SecretSource::new(&key, k.secret_env.as_deref(), k.secret_file.as_deref())
            .or_inline(k.secret.as_deref())
            .resolve(env)?;
        let secret =
            base64::engine::general_purpose::STANDARD.decode(text.expose()).map(Secret::new).map_err(|_| {
                ConfigError::invalid(
                    &key,
                    "the secret is not valid base64 (generate one with: openssl rand -base64 32)",
                )
            })?;
        if secret.expose().len() != 32 {
            return Err(ConfigError::invalid(
                key,
                format!(
                    "keys must be 32 bytes (AES-256); this one is {} (generate one with: openssl rand -base64 32)",
                    secret.expose().len()
                ),
            ));
        }
        keys.push((k.id.clone(), secret));
    }
    Ok(RequestStateConfig { ttl: Duration::from_secs(raw.ttl_seconds), max_bytes: raw.max_bytes, keys })
}
