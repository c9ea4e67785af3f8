//! Configuration: a TOML file plus `MCP_RUNTIME__*` environment overrides, validated once
//! into [`Config`] before anything binds.
//!
//! - [`raw`]: the file as written (serde structs, defaults).
//! - [`source`]: reading it with every key located, collecting every error of the file.
//! - `keys`: the parsed tree addressed by key paths (spans, named paths).
//! - [`schema`]: the JSON Schema of the file, derived from [`raw`].
//! - [`report`]: those errors shown as cargo shows compile errors (path, `file:line:col`, caret).
//! - [`hosts`]: the Host / Origin allow-lists (DNS-rebinding defence, MCP 2026-07-28 basic/transports/streamable-http § Security warning (Origin)).
//! - [`ops`]: `[telemetry]`, `[limits]` and `[tls]`.
//! - `shared`: `[request_state]`, `[redis]`, `[rate_limits]` (the limits of one tool).
//! - `auth`: `[auth]`: static tokens, JWT issuers, audiences, access rules.
//!
//! Secrets are [`mcp_adapter_api::Secret`]s, resolved by the adapter contract's one resolver.

mod auth;
pub mod console;
mod hosts;
mod keys;
pub mod ops;
pub mod raw;
pub mod report;
pub mod schema;
mod shared;
pub mod source;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use mcp_adapter_api::Environment;
use mcp_protocol::{CacheHint, Implementation};

pub use auth::{AccessRule, AccessRules, AuthConfig, IntrospectionConfig, IssuerConfig};
pub use console::{ConsoleConfig, ConsoleListener};
pub use hosts::{HostPolicy, OriginPolicy};
pub use mcp_adapter_api::Secret;
pub use ops::{LimitsConfig, LogFormat, OtlpConfig, TelemetryConfig, TlsConfig};
pub use raw::{AdapterKind, RawConfig};
pub use report::{Problem, Report};
pub use shared::{Limit, RateLimits, RedisConfig, RedisTopology, RequestStateConfig, ToolLimits};
pub use source::Source;

/// The default configuration compiled into the binary: the demo tools, no Redis.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../../config/default.toml");

/// How problems of the embedded default name it.
pub const EMBEDDED_NAME: &str = "<embedded default.toml>";

/// Prefix of environment overrides: `MCP_RUNTIME__SERVER__LISTEN=0.0.0.0:8080`.
pub const ENV_PREFIX: &str = "MCP_RUNTIME";

/// A configuration problem, naming the key and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The problems of a file (syntax, types, unknown or missing keys, located validation
    /// problems), every one of them, rendered like cargo's errors.
    #[error("{0}")]
    File(Report),
    /// A value parsed but is not acceptable.
    #[error("{key}: {problem}")]
    Invalid {
        /// Dotted key, e.g. `server.listen` or `adapters[2].tools[0].name`.
        key: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

impl ConfigError {
    /// An [`ConfigError::Invalid`].
    pub fn invalid(key: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid { key: key.into(), problem: problem.into() }
    }
}

impl From<mcp_adapter_api::ConfigProblem> for ConfigError {
    fn from(p: mcp_adapter_api::ConfigProblem) -> Self {
        Self::Invalid { key: p.key, problem: p.problem }
    }
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// HTTP endpoint settings.
    pub server: ServerConfig,
    /// Cache hints per cacheable result.
    pub caching: Caching,
    /// Sealing of MRTR `requestState`.
    pub request_state: RequestStateConfig,
    /// The tasks extension.
    pub tasks: TasksConfig,
    /// Logs, OpenTelemetry, Prometheus.
    pub telemetry: TelemetryConfig,
    /// Protection limits of the MCP endpoint.
    pub limits: LimitsConfig,
    /// HTTPS; `None` serves plain HTTP.
    pub tls: Option<TlsConfig>,
    /// Adapters, in file order.
    pub adapters: Vec<AdapterConfig>,
    /// Shared state; `None` means one node with local state.
    pub redis: Option<RedisConfig>,
    /// Rate limits.
    pub rate_limits: RateLimits,
    /// Bearer-token authentication; `None` means anonymous access.
    pub auth: Option<AuthConfig>,
    /// The operator console (`[console]`), when enabled.
    pub console: Option<ConsoleConfig>,
    /// Per-tool policy overrides, by tool name (applied when the registry is built).
    pub tool_policies: std::collections::BTreeMap<String, raw::RawPolicy>,
    /// The environment the file was loaded with: adapters are built from it, not from the
    /// live process environment.
    pub env: Environment,
    /// The text it was read from, to locate problems found later ([`Config::locate`]).
    pub source: std::sync::Arc<Source>,
}

/// `[tasks]`, validated.
#[derive(Debug, Clone, Copy)]
pub struct TasksConfig {
    /// Lifetime of a task from creation (also the deadline of its work).
    pub ttl: Duration,
    /// Suggested polling interval.
    pub poll_interval: Duration,
}

/// `[server]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Bind address.
    pub listen: SocketAddr,
    /// MCP endpoint path (starts with `/`).
    pub path: String,
    /// `serverInfo`.
    pub info: Implementation,
    /// `instructions`.
    pub instructions: Option<String>,
    /// Accepted `Host` values.
    pub hosts: HostPolicy,
    /// Accepted `Origin` values.
    pub origins: OriginPolicy,
    /// Largest accepted body.
    pub max_body_bytes: usize,
    /// Default call timeout.
    pub call_timeout: Duration,
    /// Items per list page.
    pub page_size: usize,
    /// SSE keep-alive comment interval.
    pub sse_keepalive: Duration,
    /// Most open listen and GET streams.
    pub max_listen_streams: usize,
    /// Most open listen and GET streams of one authenticated caller.
    pub max_listen_streams_per_caller: usize,
    /// How often the config file is checked for changes (`None`: only on SIGHUP).
    pub config_poll: Option<Duration>,
    /// How long in-flight calls may finish after SIGTERM/SIGINT.
    pub shutdown_grace: Duration,
}

/// Cache hints (MCP 2026-07-28 server/utilities/caching).
#[derive(Debug, Clone, Copy)]
pub struct Caching {
    /// `server/discover`.
    pub discover: CacheHint,
    /// `tools/list`.
    pub tools_list: CacheHint,
    /// `prompts/list`.
    pub prompts_list: CacheHint,
    /// `resources/list`.
    pub resources_list: CacheHint,
    /// `resources/templates/list`.
    pub resource_templates_list: CacheHint,
    /// `resources/read`.
    pub resources_read: CacheHint,
}

/// One adapter instance.
#[derive(Debug, Clone)]
pub struct AdapterConfig {
    /// Unique instance name.
    pub name: String,
    /// Kind-specific settings.
    pub kind: AdapterKind,
}

impl Config {
    /// Reads `file` (or the embedded default when `None`), applies environment overrides
    /// from `env` (pass `std::env::vars()` in production, an explicit list in tests) and validates.
    pub fn load(file: Option<&Path>, env: impl IntoIterator<Item = (String, String)>) -> Result<Self, ConfigError> {
        let env: Vec<(String, String)> = env.into_iter().collect();
        let (name, text) = match file {
            Some(path) => {
                let name = path.display().to_string();
                let text = std::fs::read_to_string(path).map_err(|e| {
                    let problem = Problem {
                        path: String::new(),
                        message: format!("cannot read it: {e}"),
                        span: None,
                        env: None,
                        help: None,
                    };
                    ConfigError::File(Report::new(name.clone(), String::new(), vec![problem]))
                })?;
                (name, text)
            }
            None => (EMBEDDED_NAME.to_owned(), EMBEDDED_DEFAULT.to_owned()),
        };
        let source = Source::new(name, text, env.iter().cloned(), ENV_PREFIX);
        Self::from_source(source, env.into_iter().collect())
    }

    /// Parses a TOML string with an empty environment (tests).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Self::from_toml_with_env(text, Environment::default())
    }

    /// Parses a TOML string; `env` stands for the process environment (no `MCP_RUNTIME__*`
    /// overrides are applied from it).
    pub fn from_toml_with_env(text: &str, env: Environment) -> Result<Self, ConfigError> {
        Self::from_source(Source::new("<config>".to_owned(), text.to_owned(), [], ENV_PREFIX), env)
    }

    fn from_source(source: Source, env: Environment) -> Result<Self, ConfigError> {
        let raw = source.read()?;
        let mut config = Self::from_raw(raw, env).map_err(|e| source.locate(e))?;
        config.source = std::sync::Arc::new(source);
        Ok(config)
    }

    /// `error` located in the file this config was read from, when it names a key of it (a
    /// problem found while building the adapters, say); other errors as they are.
    pub fn locate(&self, error: ConfigError) -> ConfigError {
        self.source.locate(error)
    }

    /// Validates a parsed file; `env` resolves `secret_env` references and the `OTEL_*`
    /// fallbacks of `[telemetry]`, and is kept for building the adapters.
    pub fn from_raw(raw: RawConfig, env: Environment) -> Result<Self, ConfigError> {
        let lookup_env = &|var: &str| env.get(var).map(str::to_owned);
        let s = raw.server;
        let listen = s.listen.parse().map_err(|e| {
            ConfigError::invalid("server.listen", format!("'{}' is not an IP:port address ({e})", s.listen))
        })?;
        if !s.path.starts_with('/') || s.path.len() < 2 {
            return Err(ConfigError::invalid(
                "server.path",
                format!("'{}' must start with '/' and name a path", s.path),
            ));
        }
        if s.max_listen_streams == 0 || s.max_listen_streams_per_caller == 0 {
            let key = if s.max_listen_streams == 0 { "max_listen_streams" } else { "max_listen_streams_per_caller" };
            return Err(ConfigError::invalid(format!("server.{key}"), "must be at least 1"));
        }
        if s.page_size == 0 {
            return Err(ConfigError::invalid("server.page_size", "must be at least 1"));
        }
        if s.max_body_bytes < 1024 {
            return Err(ConfigError::invalid("server.max_body_bytes", "must be at least 1024"));
        }
        if s.sse_keepalive_ms < 100 {
            return Err(ConfigError::invalid("server.sse_keepalive_ms", "must be at least 100"));
        }
        if s.call_timeout_ms == 0 {
            return Err(ConfigError::invalid("server.call_timeout_ms", "must be at least 1"));
        }
        let sse_keepalive = Duration::from_millis(s.sse_keepalive_ms);
        let limits = LimitsConfig::from_raw(&raw.limits, sse_keepalive)?;
        let telemetry = TelemetryConfig::from_raw(&raw.telemetry, lookup_env)?;
        let tls = raw.tls.as_ref().map(TlsConfig::from_raw).transpose()?;
        let server = ServerConfig {
            listen,
            path: s.path,
            info: Implementation {
                name: s.name,
                version: s.version.unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned()),
                title: s.title,
                description: None,
                website_url: None,
            },
            instructions: s.instructions,
            hosts: HostPolicy::new(&s.allowed_hosts).map_err(|p| ConfigError::invalid("server.allowed_hosts", p))?,
            origins: OriginPolicy::new(&s.allowed_origins)
                .map_err(|p| ConfigError::invalid("server.allowed_origins", p))?,
            max_body_bytes: s.max_body_bytes,
            call_timeout: Duration::from_millis(s.call_timeout_ms),
            page_size: s.page_size,
            sse_keepalive,
            max_listen_streams: s.max_listen_streams,
            max_listen_streams_per_caller: s.max_listen_streams_per_caller,
            config_poll: (s.config_poll_ms > 0).then(|| Duration::from_millis(s.config_poll_ms)),
            shutdown_grace: Duration::from_millis(s.shutdown_grace_ms),
        };
        let hint = |h: raw::RawHint| CacheHint { ttl_ms: h.ttl_ms, cache_scope: h.scope };
        let c = raw.caching;
        let caching = Caching {
            discover: hint(c.discover),
            tools_list: hint(c.tools_list),
            prompts_list: hint(c.prompts_list),
            resources_list: hint(c.resources_list),
            resource_templates_list: hint(c.resource_templates_list),
            resources_read: hint(c.resources_read),
        };
        let request_state = shared::request_state(&raw.request_state, &env)?;
        if raw.tasks.ttl_ms == 0 || raw.tasks.poll_interval_ms == 0 {
            return Err(ConfigError::invalid("tasks", "ttl_ms and poll_interval_ms must be at least 1"));
        }
        let tasks = TasksConfig {
            ttl: Duration::from_millis(raw.tasks.ttl_ms),
            poll_interval: Duration::from_millis(raw.tasks.poll_interval_ms),
        };
        let mut adapters: Vec<AdapterConfig> = Vec::with_capacity(raw.adapters.len());
        for (i, a) in raw.adapters.into_iter().enumerate() {
            let name = a.name.unwrap_or_else(|| a.kind.as_str().to_owned());
            if let Some(prev) = adapters.iter().position(|p| p.name == name) {
                return Err(ConfigError::invalid(
                    format!("adapters[{i}].name"),
                    format!("'{name}' is already the name of adapters[{prev}]; give each adapter a unique name"),
                ));
            }
            adapters.push(AdapterConfig { name, kind: a.kind });
        }
        let auth = raw.auth.as_ref().map(|a| auth::auth(a, &env)).transpose()?;
        let console = console::console(&raw.console, auth.as_ref(), telemetry.metrics_listen.is_some(), &server.path)?;
        let redis = raw.redis.as_ref().map(|r| shared::redis(r, &env)).transpose()?;
        let rate_limits = shared::rate_limits(&raw.rate_limits)?;
        Ok(Self {
            server,
            caching,
            request_state,
            tasks,
            adapters,
            redis,
            rate_limits,
            console,
            auth,
            telemetry,
            limits,
            tls,
            tool_policies: raw.tool_policies,
            env,
            source: std::sync::Arc::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_is_valid() {
        let c = Config::load(None, []).unwrap();
        assert_eq!(c.server.path, "/mcp");
        assert!(!c.adapters.is_empty());
    }

    #[test]
    fn environment_overrides_the_file() {
        let env = [
            ("MCP_RUNTIME__SERVER__LISTEN".to_owned(), "0.0.0.0:9000".to_owned()),
            ("MCP_RUNTIME__SERVER__PAGE_SIZE".to_owned(), "7".to_owned()),
            ("MCP_RUNTIME__SERVER__ALLOWED_HOSTS".to_owned(), "a.example,b.example".to_owned()),
        ];
        let c = Config::load(None, env).unwrap();
        assert_eq!(c.server.listen.to_string(), "0.0.0.0:9000");
        assert_eq!(c.server.page_size, 7);
        assert!(c.server.hosts.allows("b.example:443"));
    }

    #[test]
    fn keys_keep_their_case_and_dots() {
        let c = Config::from_toml(
            "[tool_policies.Mixed_Case]\nconfirm = true\n[tool_policies.\"dotted.name\"]\ntimeout_ms = 5\n",
        )
        .unwrap();
        assert!(c.tool_policies.contains_key("Mixed_Case"), "{:?}", c.tool_policies.keys());
        assert!(c.tool_policies.contains_key("dotted.name"), "{:?}", c.tool_policies.keys());
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::from_toml("[server]\nlisten = \"nope\"").unwrap_err().to_string();
        assert!(e.starts_with("error: server.listen:"), "{e}");
        let e = Config::from_toml("[server]\nlistn = \"x\"").unwrap_err().to_string();
        assert!(e.contains("listn"), "{e}");
        let e = Config::from_toml(
            "[[adapters]]\nkind = \"fixtures\"\nset = \"demo\"\n[[adapters]]\nkind = \"fixtures\"\nset = \"demo\"",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("error: adapters[1].name: 'fixtures' is already the name of adapters[0]"), "{e}");
        assert!(e.contains(" --> <config>:4:1\n"), "{e}");
        let e = Config::from_toml("[[adapters]]\nkind = \"nope\"").unwrap_err().to_string();
        assert!(e.contains("nope"), "{e}");
    }
}

#[cfg(test)]
mod report_tests;
