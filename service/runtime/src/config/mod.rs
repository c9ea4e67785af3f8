//! Configuration: one file or a set (TOML, YAML, JSON) plus `MCP_RUNTIME__*` environment
//! overrides, validated once into [`Config`] before anything binds.
//!
//! - [`raw`]: the file as written (serde structs, defaults).
//! - [`source`]: reading it with every key located, collecting every error of the file.
//! - `layers`: a set of files (several `--config`, `conf.d/` folders; TOML, YAML, JSON), each
//!   parsed with spans. `merge`: the set and the environment merged by the `config` crate.
//! - `keys`: the parsed tree addressed by key paths (spans, named paths).
//! - [`schema`]: the JSON Schema of the file, derived from [`raw`].
//! - [`report`]: those errors shown as cargo shows compile errors (path, `file:line:col`, caret).
//! - [`hosts`]: the Host / Origin allow-lists (DNS-rebinding defence, MCP 2026-07-28 basic/transports/streamable-http § Security warning (Origin)).
//! - [`ops`]: `[telemetry]`, `[limits]` and `[tls]`.
//! - `shared`: `[request_state]`, `[redis]`, `[rate_limits]` (the limits of one tool).
//! - `auth`: `[auth]`: static tokens, JWT issuers, audiences, access rules.
//! - [`audit`]: `[audit]`: the audit trail of calls.
//! - [`discovery`]: `[discovery]`: every tool listed, or found through a search.
//! - [`endpoints`]: `[[endpoints]]`: virtual MCP servers, each a selection of the catalog.
//! - [`pinning`]: `[pinning]`: upstream definitions pinned by digest in a lock file.
//! - [`card`]: `[server_card]`: the SEP-2127 server card (a draft: off by default).
//! - `validate`: a parsed file checked section by section, every problem collected.
//!
//! Secrets are [`mcp_adapter_api::Secret`]s, resolved by the adapter contract's one resolver.

pub mod audit;
mod auth;
pub mod card;
pub mod console;
pub mod discovery;
pub mod endpoints;
mod hosts;
mod keys;
mod layers;
mod merge;
pub mod ops;
pub mod pinning;
pub mod raw;
mod refine;
pub mod report;
pub mod schema;
mod shared;
pub mod source;
pub mod user_auth;
mod validate;
mod wording;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_adapter_api::Environment;
use mcp_protocol::{CacheHint, Implementation};

pub use audit::{AuditConfig, AuditSink};
pub use auth::{AccessRule, AccessRules, AuthConfig, IntrospectionConfig, IssuerConfig};
pub use card::ServerCardConfig;
pub use console::{ConsoleConfig, ConsoleListener};
pub use discovery::Discovery;
pub use hosts::{HostPolicy, OriginPolicy};
pub use layers::expand;
pub use mcp_adapter_api::{ConfigProblem, Problems, Secret};
pub use ops::{LimitsConfig, LogFormat, OtlpConfig, TelemetryConfig, TlsConfig};
pub use raw::{AdapterKind, RawConfig};
pub use report::{Problem, Report};
pub use shared::{Limit, RateLimits, RedisConfig, RedisTopology, RequestStateConfig, ToolLimits};
pub use source::Source;
pub use user_auth::{OAuthClient, UserAuthConfig};

/// The default configuration compiled into the binary: the demo tools, no Redis.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../../config/default.toml");

/// How a report names the configuration read from `paths`.
fn shown_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ")
}

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
    /// Values that parsed but are not acceptable, each naming its dotted key (e.g.
    /// `server.listen` or `adapters[2].tools[0].name`), not yet located in a file.
    #[error("{0}")]
    Invalid(Problems),
}

impl ConfigError {
    /// An [`ConfigError::Invalid`] with one problem.
    pub fn invalid(key: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid(ConfigProblem::new(key, problem).into())
    }
}

impl From<ConfigProblem> for ConfigError {
    fn from(p: ConfigProblem) -> Self {
        Self::Invalid(p.into())
    }
}

impl From<Problems> for ConfigError {
    fn from(p: Problems) -> Self {
        Self::Invalid(p)
    }
}

/// The problems of an error, to collect them with others; a located report gives its
/// problems back by their named paths.
impl From<ConfigError> for Problems {
    fn from(e: ConfigError) -> Self {
        match e {
            ConfigError::Invalid(p) => p,
            ConfigError::File(report) => {
                report.problems().iter().map(|p| ConfigProblem::new(p.path.clone(), p.message.clone())).collect()
            }
        }
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
    /// The audit trail (`[audit]`), when enabled.
    pub audit: Option<AuditConfig>,
    /// The server card (`[server_card]`), when enabled.
    pub server_card: Option<ServerCardConfig>,
    /// How clients find tools (`[discovery]`).
    pub discovery: Discovery,
    /// Virtual endpoints (`[[endpoints]]`), in file order.
    pub endpoints: Vec<endpoints::Endpoint>,
    /// Upstream definitions pinned by digest (`[pinning]`).
    pub pinning: pinning::Pinning,
    /// `[user_auth]` with its `[[upstream_auth]]` entries: callers' own upstream tokens.
    pub user_auth: Option<UserAuthConfig>,
    /// Per-tool policy overrides, by tool name (applied when the registry is built).
    pub tool_policies: std::collections::BTreeMap<String, raw::RawPolicy>,
    /// The environment the file was loaded with: adapters are built from it, not from the
    /// live process environment.
    pub env: Environment,
    /// The text it was read from, to locate problems found later ([`Config::locate`]).
    pub source: std::sync::Arc<Source>,
    /// Problems found so far, located: a config read by [`Config::read`] carries them so
    /// the later stages (adapters, registry, TLS) add theirs and one report lists all.
    pub problems: Vec<Problem>,
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
    /// `skills/list` and `resources/directory/read`.
    pub skills_list: CacheHint,
    /// `skills/get`.
    pub skills_get: CacheHint,
}

/// One adapter instance.
#[derive(Debug, Clone)]
pub struct AdapterConfig {
    /// Unique instance name.
    pub name: String,
    /// The `[[upstream_auth]]` entry its calls take each caller's own token from.
    pub user_auth: Option<String>,
    /// Kind-specific settings.
    pub kind: AdapterKind,
}

impl Config {
    /// Reads `file` (or the embedded default when `None`), applies environment overrides
    /// from `env` (pass `std::env::vars()` in production, an explicit list in tests) and
    /// validates: the config, or every problem of it.
    pub fn load(file: Option<&Path>, env: impl IntoIterator<Item = (String, String)>) -> Result<Self, ConfigError> {
        let files: Vec<PathBuf> = file.map(Path::to_path_buf).into_iter().collect();
        Self::load_set(&files, env)
    }

    /// [`Config::load`] for a set of files and folders.
    pub fn load_set(paths: &[PathBuf], env: impl IntoIterator<Item = (String, String)>) -> Result<Self, ConfigError> {
        Self::read(paths, env, false)?.checked()
    }

    /// Reads the configuration `paths` name (files, and folders of files: a set, later files
    /// overriding earlier ones key by key; none: the embedded default) and validates it as far
    /// as the files allow. `Err` only when nothing can be read (a file or folder is unreadable,
    /// a syntax error, a required key is missing); otherwise the config with its
    /// [`Config::problems`]: an invalid value is reported and a default stands in for it, so
    /// the later stages (adapters, registry, TLS) can look for their own problems and one
    /// report lists them all. A relative path written in a file starts at that file's folder.
    /// `offline` checks the files alone: no secret is read (nor anything else outside them,
    /// see [`mcp_adapter_api::Build::build`]).
    pub fn read(
        paths: &[PathBuf],
        env: impl IntoIterator<Item = (String, String)>,
        offline: bool,
    ) -> Result<Self, ConfigError> {
        let vars: Vec<(String, String)> = env.into_iter().collect();
        let unreadable = |name: String, why: String| {
            let problem = Problem { path: String::new(), message: why, span: None, env: None, help: None };
            ConfigError::File(Report::new(name, String::new(), vec![problem]))
        };
        let files = expand(paths).map_err(|e| unreadable(shown_paths(paths), e))?;
        let mut texts = Vec::with_capacity(files.len());
        for path in &files {
            let text = std::fs::read_to_string(path)
                .map_err(|e| unreadable(path.display().to_string(), format!("cannot read it: {e}")))?;
            texts.push((path.display().to_string(), text, Some(path.clone())));
        }
        if texts.is_empty() {
            texts.push((EMBEDDED_NAME.to_owned(), EMBEDDED_DEFAULT.to_owned(), None));
        }
        let title = if paths.is_empty() { EMBEDDED_NAME.to_owned() } else { shown_paths(paths) };
        // A relative path from a file was made absolute against that file's folder when the
        // set was merged; a lone file read in one pass (no overrides) is resolved here.
        let lone_dir = match texts.as_slice() {
            [(_, _, Some(path))] if !vars.iter().any(|(k, _)| k.starts_with(&format!("{ENV_PREFIX}__"))) => {
                path.parent().filter(|d| !d.as_os_str().is_empty()).map(Path::to_path_buf)
            }
            _ => None,
        };
        let source = Source::set(title, texts, vars.iter().cloned(), ENV_PREFIX);
        let mut environment: Environment = vars.into_iter().collect();
        if let Some(dir) = lone_dir {
            environment = environment.with_base_dir(dir);
        }
        if offline {
            environment = environment.offline();
        }
        Self::from_source(source, environment)
    }

    /// `Ok(self)` when no problem was found, else the report of them all.
    pub fn checked(self) -> Result<Self, ConfigError> {
        if self.problems.is_empty() {
            return Ok(self);
        }
        Err(self.source.report(self.problems))
    }

    /// The report of every problem: this config's and `more`, a later stage's.
    pub fn rejected(mut self, more: Problems) -> ConfigError {
        self.add_problems(more);
        self.source.report(self.problems)
    }

    /// Adds the problems a later stage found (keys as in the file: `adapters.text.tools.x`),
    /// located in this config's file.
    pub fn add_problems(&mut self, problems: impl Into<Problems>) {
        let located = self.source.locate_all(problems.into());
        self.problems.extend(located);
    }

    /// Parses a TOML string with an empty environment (tests).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Self::from_toml_with_env(text, Environment::default())
    }

    /// Parses a TOML string; `env` stands for the process environment (no `MCP_RUNTIME__*`
    /// overrides are applied from it).
    pub fn from_toml_with_env(text: &str, env: Environment) -> Result<Self, ConfigError> {
        Self::from_source(Source::new("<config>".to_owned(), text.to_owned(), [], ENV_PREFIX), env)?.checked()
    }

    fn from_source(source: Source, env: Environment) -> Result<Self, ConfigError> {
        let (raw, mut problems, renamed) = source.read_lenient()?;
        let (config, found) = Self::validate(raw, env);
        // A key the reading already refused (and dropped) is not reported twice, nor the
        // value of a near miss, which is about a key that is not written yet.
        let found: Vec<Problem> = source
            .locate_all(found)
            .into_iter()
            .filter(|p| !problems.iter().any(|q| report::within(&p.path, &q.path)))
            .filter(|p| !renamed.iter().any(|r| report::within(&p.path, r)))
            .collect();
        problems.extend(found);
        match config {
            Some(mut config) => {
                config.source = std::sync::Arc::new(source);
                config.problems = problems;
                Ok(config)
            }
            None => Err(source.report(problems)),
        }
    }

    /// `error` located in the file this config was read from, when it names a key of it (a
    /// problem found while building the adapters, say); other errors as they are.
    pub fn locate(&self, error: ConfigError) -> ConfigError {
        self.source.locate(error)
    }

    /// Validates a parsed file; `env` resolves `secret_env` references and the `OTEL_*`
    /// fallbacks of `[telemetry]`, and is kept for building the adapters.
    pub fn from_raw(raw: RawConfig, env: Environment) -> Result<Self, ConfigError> {
        match Self::validate(raw, env) {
            (Some(config), problems) if problems.is_empty() => Ok(config),
            (_, problems) => Err(ConfigError::Invalid(problems)),
        }
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

#[cfg(test)]
mod layers_tests;
