//! The configuration file as written: serde structs, defaults, no validation.
//! [`super::Config::from_raw`] turns this into the validated type. Every section's keys are
//! kept in this one file on purpose: it is the reference of what the file may contain.

use mcp_adapter_cli::CliConfig;
use mcp_adapter_fixtures::FixturesConfig;
use mcp_adapter_mcp::McpConfig;
use mcp_adapter_openapi::OpenApiConfig;
use mcp_adapter_rest::RestConfig;
use mcp_adapter_skills::SkillsConfig;
use mcp_protocol::CacheScope;
use schemars::JsonSchema;
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawConfig {
    /// `[server]`.
    pub server: RawServer,
    /// `[caching]`.
    pub caching: RawCaching,
    /// `[request_state]`.
    pub request_state: RawRequestState,
    /// `[tasks]`.
    pub tasks: RawTasks,
    /// `[redis]`: shared state across replicas; absent means one node with local state.
    pub redis: Option<RawRedis>,
    /// `[rate_limits]`.
    pub rate_limits: RawRateLimits,
    /// `[auth]`: bearer tokens; absent means anonymous access.
    pub auth: Option<RawAuth>,
    /// `[tool_policies.<tool name>]`: per-tool policy for tools of any adapter kind.
    pub tool_policies: std::collections::BTreeMap<String, RawPolicy>,
    /// `[telemetry]`.
    pub telemetry: RawTelemetry,
    /// `[limits]`.
    pub limits: RawLimits,
    /// `[tls]`: serve HTTPS when present.
    pub tls: Option<RawTls>,
    /// `[[adapters]]`.
    pub adapters: Vec<RawAdapter>,
    /// `[console]`: the operator console in the browser (off by default).
    pub console: super::console::RawConsole,
    /// `[audit]`: the audit trail of calls (off by default).
    pub audit: super::audit::RawAudit,
    /// `[server_card]`: the SEP-2127 server card (off by default).
    pub server_card: super::card::RawServerCard,
    /// `[discovery]`: every tool listed, or a search over them (large catalogs).
    pub discovery: super::discovery::RawDiscovery,
    /// `[[endpoints]]`: more MCP servers beside `server.path`, each a curated selection of
    /// the adapters' tools, resources and prompts.
    pub endpoints: Vec<super::endpoints::RawEndpoint>,
    /// `[pinning]`: the definitions of `mcp` and `openapi` adapters pinned by digest in a
    /// lock file; a changed or new one withheld or reported.
    pub pinning: super::pinning::RawPinning,
    /// `[user_auth]`: callers connect their own accounts at upstreams (`[[upstream_auth]]`).
    pub user_auth: Option<super::user_auth::RawUserAuth>,
    /// `[[upstream_auth]]`: the runtime's OAuth clients at upstreams' authorization servers,
    /// named by adapters' `user_auth`.
    pub upstream_auth: Vec<super::user_auth::RawClient>,
}

/// `[server]`: the HTTP endpoint and what it tells clients about itself.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawServer {
    /// Address to bind, e.g. `127.0.0.1:8080` (`--listen` overrides).
    pub listen: String,
    /// Path of the MCP endpoint.
    pub path: String,
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version` (default: the runtime's version).
    pub version: Option<String>,
    /// `serverInfo.title`.
    pub title: Option<String>,
    /// `instructions` in `server/discover`.
    pub instructions: Option<String>,
    /// Accepted `Host` header names (DNS-rebinding defence). Empty: localhost names only.
    /// `"*"` accepts any host (only behind a proxy that checks it).
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values (scheme://host[:port]). Empty: localhost origins only.
    /// `"*"` accepts any origin.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// Default upper bound for one call.
    pub call_timeout_ms: u64,
    /// Items per page of every list.
    pub page_size: usize,
    /// Interval of SSE keep-alive comments on streams (listen streams, streamed calls), so
    /// idle timeouts in proxies and load balancers do not cut them.
    pub sse_keepalive_ms: u64,
    /// Most open streams per replica: `subscriptions/listen` and 2025-era GET streams.
    pub max_listen_streams: usize,
    /// Most open streams (listen and GET) of one authenticated caller per replica.
    /// Anonymous streams count against `max_listen_streams` only.
    pub max_listen_streams_per_caller: usize,
    /// How often the config file is checked for changes (0: only reload on SIGHUP).
    pub config_poll_ms: u64,
    /// On SIGTERM/SIGINT, how long in-flight calls may run before they are cut.
    pub shutdown_grace_ms: u64,
}

impl Default for RawServer {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".to_owned(),
            path: "/mcp".to_owned(),
            name: "mcp-runtime".to_owned(),
            version: None,
            title: None,
            instructions: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 4 * 1024 * 1024,
            call_timeout_ms: 60_000,
            page_size: 100,
            sse_keepalive_ms: 15_000,
            max_listen_streams: 1024,
            max_listen_streams_per_caller: 64,
            config_poll_ms: 2000,
            shutdown_grace_ms: 25_000,
        }
    }
}

/// `[caching]`: `ttlMs` / `cacheScope` per cacheable result (MCP 2026-07-28 server/utilities/caching).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawCaching {
    /// `server/discover`.
    pub discover: RawHint,
    /// `tools/list`.
    pub tools_list: RawHint,
    /// `prompts/list`.
    pub prompts_list: RawHint,
    /// `resources/list`.
    pub resources_list: RawHint,
    /// `resources/templates/list`.
    pub resource_templates_list: RawHint,
    /// `resources/read`.
    pub resources_read: RawHint,
    /// `skills/list` and `resources/directory/read` (SEP-2640).
    pub skills_list: RawHint,
    /// `skills/get` (SEP-2640).
    pub skills_get: RawHint,
}

impl Default for RawCaching {
    fn default() -> Self {
        let public = |ttl_ms| RawHint { ttl_ms, scope: CacheScope::Public };
        Self {
            discover: public(3_600_000),
            tools_list: public(60_000),
            prompts_list: public(60_000),
            resources_list: public(30_000),
            resource_templates_list: public(30_000),
            resources_read: RawHint { ttl_ms: 0, scope: CacheScope::Private },
            skills_list: public(30_000),
            skills_get: public(30_000),
        }
    }
}

/// One hint.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawHint {
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// `public` or `private`.
    #[schemars(schema_with = "cache_scope")]
    pub scope: CacheScope,
}

fn cache_scope(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": ["public", "private"] })
}

/// `[request_state]`: sealing of MRTR `requestState` (MCP 2026-07-28 basic/patterns/mrtr § requestState integrity).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawRequestState {
    /// Lifetime of a sealed state.
    pub ttl_seconds: u64,
    /// Largest accepted `requestState` string.
    pub max_bytes: usize,
    /// The key ring: the first key seals, every key opens (rotation). Empty: a random
    /// per-process key (fine for one replica; MRTR rounds then fail across replicas).
    pub keys: Vec<RawKey>,
}

impl Default for RawRequestState {
    fn default() -> Self {
        Self { ttl_seconds: 600, max_bytes: 64 * 1024, keys: Vec::new() }
    }
}

/// One key: an id written into every token, and 32 secret bytes (base64) from exactly one
/// of `secret_env`, `secret_file` or `secret`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawKey {
    /// Key id (letters, digits, `-`, `_`).
    pub id: String,
    /// Environment variable holding the base64 key.
    pub secret_env: Option<String>,
    /// File holding the base64 key (e.g. a mounted Kubernetes Secret).
    pub secret_file: Option<String>,
    /// The base64 key inline (tests and local use only).
    pub secret: Option<String>,
}

/// `[auth]`: who may call: static bearer tokens, JWT issuers, introspection endpoints, and the
/// access rules per tool, prompt and resource (MCP 2026-07-28 basic/authorization).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawAuth {
    /// This server's canonical URL, advertised in Protected Resource Metadata (RFC 9728).
    pub resource: Option<String>,
    /// Authorization servers for the metadata document.
    pub authorization_servers: Vec<String>,
    /// Accepted tokens, each naming its subject.
    pub tokens: Vec<RawToken>,
    /// Further `aud` values accepted besides `resource` (ingress aliases, an IdP's app id).
    pub audiences: Vec<String>,
    /// Scopes advertised in the metadata document (`scopes_supported`) and in challenges.
    pub scopes_supported: Vec<String>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    pub leeway_seconds: Option<u64>,
    /// `[[auth.issuers]]`: authorization servers whose JWT access tokens are accepted.
    pub issuers: Vec<RawIssuer>,
    /// `[[auth.introspection]]`: RFC 7662 endpoints asked about opaque tokens.
    pub introspection: Vec<RawIntrospection>,
    /// `[auth.tools.<name>]`: what a caller needs to see and call a tool.
    pub tools: std::collections::BTreeMap<String, RawAccessRule>,
    /// `[auth.prompts.<name>]`: the same for a prompt.
    pub prompts: std::collections::BTreeMap<String, RawAccessRule>,
    /// `[auth.resources."<uri>"]`: the same for a resource.
    pub resources: std::collections::BTreeMap<String, RawAccessRule>,
}

/// One trusted issuer of JWT access tokens (RFC 9068 profile accepted, not required).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawIssuer {
    /// The exact `iss` value.
    pub issuer: String,
    /// Where its keys are; absent: discovered through RFC 8414 / OpenID metadata.
    pub jwks_uri: Option<String>,
    /// Accepted `aud` values for this issuer; absent: `resource` plus `[auth] audiences`.
    pub audiences: Option<Vec<String>>,
    /// Background refresh period of the key set, in seconds.
    #[serde(default = "default_jwks_refresh")]
    pub jwks_refresh_seconds: u64,
    /// Least time between two fetches caused by unknown `kid`s, in milliseconds.
    #[serde(default = "default_jwks_min_interval")]
    pub jwks_min_interval_ms: u64,
}

fn default_jwks_refresh() -> u64 {
    300
}

fn default_jwks_min_interval() -> u64 {
    10_000
}

/// One RFC 7662 introspection endpoint and the runtime's client credentials for it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawIntrospection {
    /// The introspection endpoint.
    pub endpoint: String,
    /// The issuer its tokens come from (their identity's issuer; an answer naming another is refused).
    pub issuer: String,
    /// The runtime's client id at that authorization server.
    pub client_id: String,
    /// Environment variable holding the client secret.
    pub client_secret_env: Option<String>,
    /// File holding the client secret.
    pub client_secret_file: Option<String>,
    /// The client secret inline (tests and local use only).
    pub client_secret: Option<String>,
    /// Accepted `aud` values; absent: `resource` plus `[auth] audiences`.
    pub audiences: Option<Vec<String>>,
}

/// What a caller needs for one tool, prompt or resource.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawAccessRule {
    /// Every one of these scopes.
    pub scopes: Vec<String>,
    /// Claim conditions: the claim equals the value, or (an array claim) contains it.
    pub claims: std::collections::BTreeMap<String, String>,
}

/// One accepted bearer token: the subject it identifies and the token from exactly one of
/// `secret_env`, `secret_file` or `secret`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawToken {
    /// Who the token belongs to (binds MRTR state and tasks, keys rate limits).
    pub subject: String,
    /// Environment variable holding the token.
    pub secret_env: Option<String>,
    /// File holding the token.
    pub secret_file: Option<String>,
    /// The token inline (tests only).
    pub secret: Option<String>,
}

/// `[tool_policies.<tool name>]`: overrides of a tool's runtime policy (the contract's type,
/// next to the policy it overrides).
pub use mcp_adapter_api::PolicyOverride as RawPolicy;

/// `[redis]`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawRedis {
    /// `redis://[:password@]host:port[/db]` (may carry a password: prefer `url_env`/`url_file`).
    pub url: Option<String>,
    /// Environment variable holding the URL.
    pub url_env: Option<String>,
    /// File holding the URL.
    pub url_file: Option<String>,
    /// Readiness fails while Redis is unreachable.
    pub required: bool,
    /// Upper bound of every Redis call.
    pub timeout_ms: u64,
    /// How long the circuit breaker stays open after repeated failures.
    pub breaker_open_ms: u64,
    /// Prefix of every key and channel (several deployments can share one Redis).
    pub key_prefix: String,
    /// `single` (default), `sentinel` (`url` and `nodes` are sentinels) or `cluster` (`url`
    /// and `nodes` are seed nodes).
    pub mode: Option<String>,
    /// More sentinels or cluster seed nodes, as URLs without credentials.
    pub nodes: Vec<String>,
    /// Sentinel: the name of the monitored master.
    pub master_name: Option<String>,
    /// ACL user name (the password comes from `password_env` / `password_file`).
    pub username: Option<String>,
    /// Environment variable holding the ACL password.
    pub password_env: Option<String>,
    /// File holding the ACL password.
    pub password_file: Option<String>,
    /// The ACL password inline (tests only).
    pub password: Option<String>,
    /// PEM file of the CA that signed the servers' certificates (`rediss://`); default: the
    /// system's roots.
    pub tls_ca_file: Option<String>,
}

impl Default for RawRedis {
    fn default() -> Self {
        Self {
            url: None,
            url_env: None,
            url_file: None,
            required: false,
            timeout_ms: 250,
            breaker_open_ms: 2000,
            key_prefix: "mcp-runtime:".into(),
            mode: None,
            nodes: Vec::new(),
            master_name: None,
            username: None,
            password_env: None,
            password_file: None,
            password: None,
            tls_ca_file: None,
        }
    }
}

/// `[rate_limits]`: defaults for every tool, and per-tool overrides.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawRateLimits {
    /// With Redis: how long a replica may hold budget it took ahead of use (leases sized from
    /// its recent rate, so most calls make no Redis round trip). The cluster may exceed a
    /// limit by at most `rate × lease_ms` calls in any window. 0: every call asks Redis.
    pub lease_ms: u64,
    /// Per caller × tool.
    pub per_caller: Option<RawLimit>,
    /// Per tool, all callers together.
    pub global: Option<RawLimit>,
    /// `[rate_limits.tools.<tool>]`.
    pub tools: std::collections::BTreeMap<String, RawToolLimits>,
}

impl Default for RawRateLimits {
    fn default() -> Self {
        Self { lease_ms: 100, per_caller: None, global: None, tools: std::collections::BTreeMap::new() }
    }
}

/// Overrides for one tool.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawToolLimits {
    /// Per caller × this tool.
    pub per_caller: Option<RawLimit>,
    /// This tool, all callers together.
    pub global: Option<RawLimit>,
}

/// `{ rate = 10, per_ms = 1000, burst = 20 }`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLimit {
    /// Calls per period.
    pub rate: u32,
    /// The period (default one second).
    #[serde(default = "one_second")]
    pub per_ms: u64,
    /// Calls allowed at once (default: `rate`).
    pub burst: Option<u32>,
}

fn one_second() -> u64 {
    1000
}

/// `[tasks]`: the tasks extension (MCP tasks extension).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawTasks {
    /// Lifetime of a task from creation; also the deadline of its work.
    pub ttl_ms: u64,
    /// Suggested `pollIntervalMs`.
    pub poll_interval_ms: u64,
}

impl Default for RawTasks {
    fn default() -> Self {
        Self { ttl_ms: 3_600_000, poll_interval_ms: 1000 }
    }
}

/// One `[[adapters]]` entry: a name plus the kind-specific settings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RawAdapter {
    /// Instance name, used in logs and metrics (default: the kind).
    #[serde(default)]
    pub name: Option<String>,
    /// The `[[upstream_auth]]` entry whose token each caller connects for this adapter's
    /// upstream (rest, openapi, mcp): calls carry the caller's own token.
    #[serde(default)]
    pub user_auth: Option<String>,
    /// Kind and settings.
    #[serde(flatten)]
    pub kind: AdapterKind,
}

/// The closed set of adapter kinds.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AdapterKind {
    /// Built-in demo or conformance fixtures.
    Fixtures(FixturesConfig),
    /// HTTP endpoints of an upstream pool (boxed: its config is large).
    Rest(Box<RestConfig>),
    /// Command-line programs as tools.
    Cli(CliConfig),
    /// Another MCP server (remote or hosted stdio) as an upstream (boxed: its config is large).
    Mcp(Box<McpConfig>),
    /// The operations of an OpenAPI document, run by the REST adapter (boxed: large).
    #[serde(rename = "openapi")]
    OpenApi(Box<OpenApiConfig>),
    /// A folder of Agent Skills (`io.modelcontextprotocol/skills`, SEP-2640).
    Skills(SkillsConfig),
}

impl AdapterKind {
    /// Deserializes the settings of one `kind` (an entry without `name` and `kind`) and drops
    /// them: serde buffers this flattened, internally tagged enum and loses the path of an
    /// error inside it, so the error is found again through this with its path. A new kind
    /// adds its line here.
    pub fn check_settings<'de, D: serde::Deserializer<'de>>(kind: &str, settings: D) -> Result<(), D::Error> {
        match kind {
            "fixtures" => FixturesConfig::deserialize(settings).map(drop),
            "rest" => RestConfig::deserialize(settings).map(drop),
            "cli" => CliConfig::deserialize(settings).map(drop),
            "mcp" => McpConfig::deserialize(settings).map(drop),
            "openapi" => OpenApiConfig::deserialize(settings).map(drop),
            "skills" => SkillsConfig::deserialize(settings).map(drop),
            _ => Ok(()),
        }
    }

    /// Deserializes the kind's own part of one declared tool (`[[adapters.tools]]`, the
    /// entry's other keys ignored) and drops it: the tool's keys are flattened too, so an
    /// error inside one of them (`paths.<arg>.mode`) is found again through this with its
    /// path, as [`Self::check_settings`] finds an adapter's.
    pub fn check_tool<'de, D: serde::Deserializer<'de>>(kind: &str, tool: D) -> Result<(), D::Error> {
        match kind {
            "cli" => mcp_adapter_cli::config::CliTool::deserialize(tool).map(drop),
            "rest" => mcp_adapter_rest::config::RestTool::deserialize(tool).map(drop),
            _ => Ok(()),
        }
    }

    /// The `kind` string.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Fixtures(_) => "fixtures",
            Self::Rest(_) => "rest",
            Self::Cli(_) => "cli",
            Self::Mcp(_) => "mcp",
            Self::OpenApi(_) => "openapi",
            Self::Skills(_) => "skills",
        }
    }
}

/// `[telemetry]`: logs, OpenTelemetry export and the Prometheus endpoint. Unset keys fall
/// back to the standard `OTEL_*` variables, then to the defaults.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawTelemetry {
    /// `text` (default) or `json`.
    pub log_format: Option<String>,
    /// OTLP/HTTP base URL (`http://collector:4318`); setting it turns OpenTelemetry on.
    pub otlp_endpoint: Option<String>,
    /// `service.name` of the exported telemetry.
    pub service_name: Option<String>,
    /// Export traces (when an endpoint is set).
    pub traces: Option<bool>,
    /// Export metrics over OTLP (when an endpoint is set).
    pub metrics: Option<bool>,
    /// Fraction of new traces sampled (parent-based: a sampled caller is always followed).
    pub sample_ratio: Option<f64>,
    /// Interval of OTLP metric exports.
    pub metrics_export_interval_ms: Option<u64>,
    /// Timeout of one OTLP export.
    pub export_timeout_ms: Option<u64>,
    /// Serve `/metrics` (and the health probes) on this address instead of the main listener.
    pub metrics_listen: Option<String>,
}

/// `[limits]`: the protection layers in front of the MCP endpoint.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawLimits {
    /// Time until the response head; SSE bodies are not cut by it.
    pub request_timeout_ms: u64,
    /// Requests (and streamed calls) in progress at once; more get 503.
    pub max_concurrent_requests: usize,
    /// Deepest accepted JSON nesting of a body.
    pub max_json_depth: usize,
    /// `Retry-After` seconds sent with 503.
    pub retry_after_seconds: u64,
    /// Time a client has for its request head (HTTP/1) or its TLS handshake.
    pub header_read_timeout_ms: u64,
    /// Time a client has to send a whole request body.
    pub body_read_timeout_ms: u64,
    /// Connections open at once; past it new ones wait in the listen backlog.
    pub max_connections: usize,
}

impl Default for RawLimits {
    fn default() -> Self {
        Self {
            request_timeout_ms: 300_000,
            max_concurrent_requests: 1024,
            max_json_depth: 64,
            retry_after_seconds: 1,
            header_read_timeout_ms: 30_000,
            body_read_timeout_ms: 30_000,
            max_connections: 10_000,
        }
    }
}

/// `[tls]`: HTTPS with a PEM certificate chain and key, reloaded when the files change.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTls {
    /// PEM certificate chain, leaf first.
    pub cert_file: String,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key_file: String,
    /// How often the files are checked for changes.
    #[serde(default = "default_tls_reload")]
    pub reload_interval_ms: u64,
}

fn default_tls_reload() -> u64 {
    10_000
}
