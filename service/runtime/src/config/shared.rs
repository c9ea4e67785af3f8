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
    /// How the servers are found.
    pub topology: RedisTopology,
    /// ACL user name.
    pub username: Option<String>,
    /// ACL password.
    pub password: Option<Secret>,
    /// PEM roots for `rediss://` (`None`: the system's roots).
    pub tls_ca: Option<Vec<u8>>,
}

/// `redis.mode`: one server, a Sentinel-monitored master, or a Redis Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTopology {
    /// `url` is the server.
    Single,
    /// `url` and `nodes` are sentinels watching `master_name`.
    Sentinel {
        /// The monitored master's name.
        master_name: String,
        /// Sentinel URLs, `url` first.
        sentinels: Vec<String>,
    },
    /// `url` and `nodes` are seed nodes of a cluster.
    Cluster {
        /// Seed URLs, `url` first.
        seeds: Vec<String>,
    },
}

/// `[rate_limits]`, validated.
#[derive(Debug, Clone, Default)]
pub struct RateLimits {
    /// How long a replica may hold cluster-wide budget taken ahead of use (zero: no leases).
    pub lease: Duration,
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
    let usable = |u: &str| {
        redis::parse_redis_url(u).is_some_and(|p| matches!(p.scheme(), "redis" | "rediss"))
            && redis::Client::open(u).is_ok()
    };
    // Offline, the URL is not read: nothing to check of it.
    if !url.is_unresolved() && !usable(url.expose_str()) {
        return Err(ConfigError::invalid(
            "redis.url",
            "not a usable redis://[user:password@]host:port[/db] or rediss://… (TLS) URL",
        ));
    }
    for (i, node) in raw.nodes.iter().enumerate() {
        if !usable(node) {
            return Err(ConfigError::invalid(format!("redis.nodes[{i}]"), "not a redis:// or rediss:// URL"));
        }
    }
    let nodes = || std::iter::once(url.expose_str().to_owned()).chain(raw.nodes.iter().cloned()).collect();
    let topology = match raw.mode.as_deref().unwrap_or("single") {
        "single" if raw.nodes.is_empty() => RedisTopology::Single,
        "single" => {
            return Err(ConfigError::invalid("redis.nodes", "only with mode = \"sentinel\" or \"cluster\""));
        }
        "sentinel" => match raw.master_name.as_deref() {
            Some(name) if !name.is_empty() => {
                RedisTopology::Sentinel { master_name: name.to_owned(), sentinels: nodes() }
            }
            _ => return Err(ConfigError::invalid("redis.master_name", "required with mode = \"sentinel\"")),
        },
        "cluster" => RedisTopology::Cluster { seeds: nodes() },
        other => {
            return Err(ConfigError::invalid(
                "redis.mode",
                format!("'{other}' is not one of \"single\", \"sentinel\", \"cluster\""),
            ));
        }
    };
    if raw.master_name.is_some() && !matches!(topology, RedisTopology::Sentinel { .. }) {
        return Err(ConfigError::invalid("redis.master_name", "only with mode = \"sentinel\""));
    }
    let password = if raw.password_env.is_some() || raw.password_file.is_some() || raw.password.is_some() {
        Some(
            SecretSource::new("redis", raw.password_env.as_deref(), raw.password_file.as_deref())
                .stem("password")
                .or_inline(raw.password.as_deref())
                .resolve(env)?,
        )
    } else {
        None
    };
    if raw.username.is_some() && password.is_none() {
        return Err(ConfigError::invalid("redis.username", "needs password_env or password_file"));
    }
    let tls_ca = match &raw.tls_ca_file {
        None => None,
        Some(path) => {
            let pem = read_capped(path, 1 << 20)
                .map_err(|e| ConfigError::invalid("redis.tls_ca_file", format!("cannot read '{path}': {e}")))?;
            if !pem.windows(11).any(|w| w == b"-----BEGIN ") {
                return Err(ConfigError::invalid("redis.tls_ca_file", format!("'{path}' holds no PEM certificate")));
            }
            Some(pem)
        }
    };
    if raw.timeout_ms == 0 || raw.breaker_open_ms == 0 {
        return Err(ConfigError::invalid("redis", "timeout_ms and breaker_open_ms must be at least 1"));
    }
    Ok(RedisConfig {
        url,
        required: raw.required,
        timeout: Duration::from_millis(raw.timeout_ms),
        breaker_open: Duration::from_millis(raw.breaker_open_ms),
        key_prefix: raw.key_prefix.clone(),
        topology,
        username: raw.username.clone(),
        password,
        tls_ca,
    })
}

/// Reads at most `cap` bytes of `path`: a larger file (or `/dev/zero`) is an error, not a hang.
fn read_capped(path: &str, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::other(format!("larger than {cap} bytes")));
    }
    Ok(bytes)
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
    if raw.lease_ms > 10_000 {
        return Err(ConfigError::invalid(
            "rate_limits.lease_ms",
            "must be at most 10000: a limit may be exceeded by rate × lease_ms calls",
        ));
    }
    Ok(RateLimits { lease: Duration::from_millis(raw.lease_ms), default, tools })
}

pub(super) fn request_state(raw: &raw::RawRequestState, env: &Environment) -> Result<RequestStateConfig, ConfigError> {
    if raw.ttl_seconds == 0 {
        return Err(ConfigError::invalid("request_state.ttl_seconds", "must be at least 1"));
    }
    let keys = key_ring("request_state.keys", &raw.keys, env)?;
    Ok(RequestStateConfig { ttl: Duration::from_secs(raw.ttl_seconds), max_bytes: raw.max_bytes, keys })
}

/// An AES-256 key ring as written at `prefix` (`request_state.keys`): unique ids, 32 bytes of
/// base64 each (unresolved offline).
pub(super) fn key_ring(
    prefix: &str,
    raw: &[raw::RawKey],
    env: &Environment,
) -> Result<Vec<(String, Secret)>, ConfigError> {
    let mut keys: Vec<(String, Secret)> = Vec::with_capacity(raw.len());
    for (i, k) in raw.iter().enumerate() {
        let key = format!("{prefix}[{i}]");
        if k.id.is_empty() || !k.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(ConfigError::invalid(format!("{key}.id"), "use letters, digits, '-' and '_' only"));
        }
        if keys.iter().any(|(id, _)| *id == k.id) {
            return Err(ConfigError::invalid(format!("{key}.id"), format!("'{}' is used twice", k.id)));
        }
        let text = SecretSource::new(&key, k.secret_env.as_deref(), k.secret_file.as_deref())
            .or_inline(k.secret.as_deref())
            .resolve(env)?;
        if text.is_unresolved() {
            keys.push((k.id.clone(), text));
            continue;
        }
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
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::RedisTopology;

    fn redis(section: &str) -> Result<super::RedisConfig, String> {
        Config::from_toml(&format!("[redis]\n{section}\n"))
            .map(|c| c.redis.expect("a [redis] section"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn topologies_tls_and_acl_parse() {
        let c = redis("url = \"rediss://h:6380\"\nusername = \"app\"\npassword = \"pw\"").unwrap();
        assert_eq!((c.topology, c.username.as_deref()), (RedisTopology::Single, Some("app")));
        assert_eq!(c.password.unwrap().expose_str(), "pw");
        let c = redis(
            "mode = \"sentinel\"\nmaster_name = \"m\"\nurl = \"redis://s1:26379\"\nnodes = [\"redis://s2:26379\"]",
        )
        .unwrap();
        let RedisTopology::Sentinel { master_name, sentinels } = c.topology else { panic!("sentinel") };
        assert_eq!((master_name.as_str(), sentinels.len()), ("m", 2));
        let c = redis("mode = \"cluster\"\nurl = \"redis://a:7000\"\nnodes = [\"redis://b:7000\"]").unwrap();
        assert!(matches!(c.topology, RedisTopology::Cluster { seeds } if seeds.len() == 2));
    }

    #[test]
    fn mistakes_name_the_key() {
        for (section, key) in [
            ("url = \"http://h\"", "redis.url:"),
            ("url = \"redis://h\"\nmode = \"ring\"", "redis.mode:"),
            ("url = \"redis://h\"\nmode = \"sentinel\"", "redis.master_name:"),
            ("url = \"redis://h\"\nmaster_name = \"m\"", "redis.master_name:"),
            ("url = \"redis://h\"\nnodes = [\"redis://b\"]", "redis.nodes:"),
            ("url = \"redis://h\"\nmode = \"cluster\"\nnodes = [\"nope\"]", "redis.nodes[0]:"),
            ("url = \"redis://h\"\nusername = \"app\"", "redis.username:"),
            ("url = \"redis://h\"\ntls_ca_file = \"/nonexistent/ca.pem\"", "redis.tls_ca_file:"),
            ("url = \"redis://h\"\ntls_ca_file = \"/proc/version\"", "redis.tls_ca_file:"),
            ("url = \"redis://h\"\ntls_ca_file = \"/dev/zero\"", "redis.tls_ca_file:"),
        ] {
            // The report's first line: `error: <path>: <what is wrong>`.
            let e = redis(section).unwrap_err();
            assert!(e.starts_with(&format!("error: {key}")), "{section}: {e}");
        }
    }
}
