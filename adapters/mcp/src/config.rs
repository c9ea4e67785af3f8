//! The `[[adapters]] kind = "mcp"` section as written: one upstream MCP server, reached over
//! Streamable HTTP (`url`) or started as a hosted stdio server (`command`).

use std::collections::BTreeMap;

use mcp_adapter_cli::config::RunLimits;
use mcp_adapter_cli::env::LoaderOptIn;
use mcp_adapter_rest::config::{AuthConfig, PoolConfig, TokenExchangeConfig};
use schemars::JsonSchema;
use serde::Deserialize;

/// `[[adapters]] kind = "mcp"`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Streamable HTTP endpoint of a remote server (`https://host/mcp`). Exactly one of `url`
    /// and `command`.
    pub url: Option<String>,
    /// Program of a hosted stdio server: a bare name looked up on the runtime's `PATH`, or an
    /// absolute path. Never run through a shell.
    pub command: Option<String>,
    /// Its arguments, one argv entry each.
    #[serde(default)]
    pub args: Vec<String>,
    /// Which revision to speak: `auto` (probe `server/discover`, fall back to `initialize`),
    /// `2026-07-28`, or `2025` (the `initialize` handshake).
    #[serde(default)]
    pub protocol: Protocol,
    /// Put before every tool, prompt, resource and template name (`github_`); none by default.
    #[serde(default)]
    pub prefix: String,
    /// Upstream names (before the prefix) to offer; `*` matches any run of characters.
    /// Empty: everything.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Upstream names to leave out (wins over `allow`).
    #[serde(default)]
    pub deny: Vec<String>,
    /// How long the upstream's lists are trusted before they are fetched again (also on its
    /// `list_changed` notifications).
    #[serde(default = "default_catalog_ttl_ms")]
    pub catalog_ttl_ms: u64,
    /// Deadline of the requests the adapter makes on its own (handshake, lists, `ping`).
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// Largest message accepted from the upstream.
    #[serde(default = "default_max_message_bytes")]
    pub max_message_bytes: usize,
    /// HTTP: the credential sent with every request (as the REST adapter's `auth`). With
    /// `token_exchange`, the service credential: lists, `ping` and the handshake use it, calls
    /// carry the caller's exchanged token instead.
    pub auth: Option<AuthConfig>,
    /// HTTP: calls reach the upstream as their caller, with a token exchanged for the caller's
    /// own access token (RFC 8693, as the REST adapter's `token_exchange`). A 2025-era upstream
    /// gets a session per caller.
    pub token_exchange: Option<TokenExchangeConfig>,
    /// HTTP: fixed headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// HTTP: connection timeout.
    #[serde(default = "default_connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// HTTP: idle keep-alive connections.
    #[serde(default)]
    pub pool: PoolConfig,
    /// stdio: the runtime's variables passed on (the child's environment is otherwise empty).
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// stdio: fixed variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// stdio: loader variables this server may get (refused otherwise).
    #[serde(default)]
    pub allow_loader_env: LoaderOptIn,
    /// stdio: working directory.
    pub working_dir: Option<String>,
    /// stdio: server processes per replica; calls go to the least busy.
    #[serde(default = "default_processes")]
    pub processes: usize,
    /// stdio: what each server process tree may use (0: no limit). CPU time is unlimited by
    /// default: a server lives long.
    #[serde(default = "default_limits")]
    pub limits: RunLimits,
    /// stdio: restart backoff after a process died.
    #[serde(default)]
    pub restart: RestartConfig,
    /// stdio: how often each process is sent `ping` (0: never); one without an answer within
    /// `request_timeout_ms` is restarted.
    #[serde(default = "default_health_interval_ms")]
    pub health_interval_ms: u64,
}

/// The revision spoken to the upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Protocol {
    /// Probe with `server/discover`; a server that does not know it gets `initialize`.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// MCP 2026-07-28: stateless, the envelope in every request's `_meta`.
    #[serde(rename = "2026-07-28")]
    Modern,
    /// The 2025-era revisions: `initialize`, then a session (HTTP) or the process (stdio).
    #[serde(rename = "2025")]
    Legacy,
}

/// `restart = { initial_backoff_ms, max_backoff_ms }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RestartConfig {
    /// First wait after a crash.
    pub initial_backoff_ms: u64,
    /// Longest wait (the wait doubles per crash in a row, with jitter).
    pub max_backoff_ms: u64,
}

impl Default for RestartConfig {
    fn default() -> Self {
        Self { initial_backoff_ms: 100, max_backoff_ms: 30_000 }
    }
}

fn default_catalog_ttl_ms() -> u64 {
    300_000
}
fn default_request_timeout_ms() -> u64 {
    10_000
}
fn default_max_message_bytes() -> usize {
    16 * 1024 * 1024
}
fn default_connect_timeout_ms() -> u64 {
    5_000
}
fn default_processes() -> usize {
    1
}
fn default_health_interval_ms() -> u64 {
    15_000
}
fn default_limits() -> RunLimits {
    RunLimits { cpu_seconds: 0, ..RunLimits::default() }
}
