//! Configuration of the REST adapter as written (`[[adapters]] kind = "rest"`): serde structs
//! and defaults. `Rest::build` validates them once, at load, into compiled plans.

use schemars::JsonSchema;
use std::collections::BTreeMap;

pub use mcp_adapter_api::ConfigProblem;
use mcp_adapter_api::{ToolDecl, ToolKind};
use serde::Deserialize;
use serde_json::{Map, Value};

/// `[[adapters]] kind = "rest"`: one upstream API served by a pool of base URLs.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestConfig {
    /// Base URLs of equivalent upstreams (`https://api.example.com/v1`), used round-robin.
    /// The host of every request comes from here and nowhere else. (Required for a REST
    /// adapter; an OpenAPI adapter may take it from the document's `servers`.)
    #[serde(default)]
    pub base_urls: Vec<String>,
    /// Credentials sent on every request (and health check) of this adapter.
    #[serde(default)]
    pub auth: Option<AuthConfig>,
    /// Per-caller credentials: each call sends `Authorization: Bearer <token>` with a token
    /// exchanged (RFC 8693) for the caller's own access token, cached per caller.
    #[serde(default)]
    pub token_exchange: Option<TokenExchangeConfig>,
    /// Fixed headers on every request (`{ Accept = "application/json" }`); no templates.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `User-Agent` of every request (some APIs, e.g. GitHub's, refuse requests without one).
    #[serde(default = "default_user_agent")]
    pub user_agent: String,
    /// Upper bound for establishing one connection (TCP + TLS).
    #[serde(default = "default_connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Largest response body read; longer bodies are cut and the result says so.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
    /// Redirects followed per request, and only to the same scheme, host and port.
    #[serde(default = "default_max_redirects")]
    pub max_redirects: usize,
    /// Calls of this adapter in flight at once; more wait for a slot until their deadline.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
    /// Keep-alive connection pool.
    #[serde(default)]
    pub pool: PoolConfig,
    /// Retries of idempotent requests.
    #[serde(default)]
    pub retry: RetryConfig,
    /// Taking a failing upstream out of rotation.
    #[serde(default)]
    pub ejection: EjectionConfig,
    /// Optional active health check of every upstream.
    #[serde(default)]
    pub health_check: Option<HealthCheckConfig>,
    /// The tools: one HTTP request each.
    #[serde(default)]
    pub tools: Vec<RawTool>,
}

fn default_user_agent() -> String {
    concat!("mcp-runtime/", env!("CARGO_PKG_VERSION")).to_owned()
}
fn default_connect_timeout_ms() -> u64 {
    5_000
}
fn default_max_response_bytes() -> usize {
    1024 * 1024
}
fn default_max_redirects() -> usize {
    3
}
fn default_max_concurrent() -> usize {
    256
}

/// `[adapters.pool]`: idle keep-alive connections.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PoolConfig {
    /// Idle connections kept per upstream host.
    pub max_idle_per_host: usize,
    /// How long an idle connection is kept.
    pub idle_timeout_ms: u64,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self { max_idle_per_host: 32, idle_timeout_ms: 90_000 }
    }
}

/// `[adapters.retry]`: exponential backoff with full jitter.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Attempts per call, the first included (1 disables retries).
    pub max_attempts: usize,
    /// Upper bound of the first backoff; it doubles per retry.
    pub initial_backoff_ms: u64,
    /// Cap of the backoff before jitter.
    pub max_backoff_ms: u64,
    /// Longest one attempt may take (connect, request, whole response); a hung upstream is
    /// given up on after it, counted as a failure, and an idempotent call moves on.
    pub attempt_timeout_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self { max_attempts: 3, initial_backoff_ms: 100, max_backoff_ms: 2_000, attempt_timeout_ms: 10_000 }
    }
}

/// `[adapters.ejection]`: consecutive failures (connect errors, 5xx) eject an upstream.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EjectionConfig {
    /// Consecutive failures that eject an upstream.
    pub consecutive_failures: u32,
    /// How long an ejected upstream stays out of rotation.
    pub eject_ms: u64,
}

impl Default for EjectionConfig {
    fn default() -> Self {
        Self { consecutive_failures: 3, eject_ms: 30_000 }
    }
}

/// `[adapters.health_check]`: `GET base_url + path` every `interval_ms`; a 2xx restores an
/// ejected upstream at once, a failure counts like a failed request.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthCheckConfig {
    /// Path below each base URL, e.g. `/health`.
    pub path: String,
    /// Probe interval.
    #[serde(default = "default_health_interval_ms")]
    pub interval_ms: u64,
    /// Upper bound of one probe.
    #[serde(default = "default_health_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_health_interval_ms() -> u64 {
    10_000
}
fn default_health_timeout_ms() -> u64 {
    2_000
}

/// `[adapters.auth]`: where the credential comes from; exactly one of `secret_env` and
/// `secret_file` (never inline: a config file is not a secret store).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AuthConfig {
    /// `Authorization: Bearer <secret>`.
    Bearer(SecretRef),
    /// `<header>: <secret>`.
    ApiKey(ApiKeyAuth),
    /// `Authorization: Basic base64(username:secret)`.
    Basic(BasicAuth),
}

/// `token_exchange = { ... }`: an RFC 8693 token exchange at the caller's authorization
/// server: the caller's access token is the subject token, the answer is the upstream's
/// bearer token for that caller.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenExchangeConfig {
    /// The authorization server's token endpoint (`https://idp.example.com/oauth2/token`).
    pub token_endpoint: String,
    /// This runtime's client id at that server.
    pub client_id: String,
    /// Environment variable holding the client secret.
    pub client_secret_env: Option<String>,
    /// File holding the client secret.
    pub client_secret_file: Option<String>,
    /// How the client authenticates (RFC 6749 § 2.3.1): `client_secret_basic` (default) or
    /// `client_secret_post`.
    #[serde(default)]
    pub client_auth_method: ClientAuthMethod,
    /// `audience` of the request: the upstream's name at the server (a client id, a URI).
    pub audience: Option<String>,
    /// `resource` of the request (RFC 8707): the upstream's URL.
    pub resource: Option<String>,
    /// `scope` of the request (space-separated).
    pub scope: Option<String>,
    /// Upper bound of one exchange (the call's deadline bounds it too).
    #[serde(default = "default_exchange_timeout_ms")]
    pub timeout_ms: u64,
    /// Callers whose exchanged tokens are kept at once.
    #[serde(default = "default_exchange_cache_capacity")]
    pub cache_capacity: u64,
}

fn default_exchange_timeout_ms() -> u64 {
    10_000
}
fn default_exchange_cache_capacity() -> u64 {
    10_000
}

/// Client authentication at the token endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuthMethod {
    /// HTTP Basic with the form-encoded client id and secret.
    #[default]
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
}

/// A secret by reference.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    /// Environment variable holding the secret.
    pub secret_env: Option<String>,
    /// File holding the secret (e.g. a mounted Kubernetes Secret); trailing whitespace is cut.
    pub secret_file: Option<String>,
}

/// `kind = "api_key"`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyAuth {
    /// Header carrying the key, e.g. `X-Api-Key`.
    pub header: String,
    /// Environment variable holding the key.
    pub secret_env: Option<String>,
    /// File holding the key.
    pub secret_file: Option<String>,
}

/// `kind = "basic"`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BasicAuth {
    /// User name (not secret).
    pub username: String,
    /// Environment variable holding the password.
    pub secret_env: Option<String>,
    /// File holding the password.
    pub secret_file: Option<String>,
}

/// `[[adapters.tools]]`: one tool, one HTTP request. The declaration every adapter kind
/// shares (name, description, schemas, annotations, the runtime's policy keys, the
/// unknown-key guard) plus [`RestTool`].
pub type RawTool = ToolDecl<RestTool>;

/// The REST-specific keys of a tool entry.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct RestTool {
    /// HTTP method (default `GET`).
    #[serde(default = "default_method")]
    pub method: String,
    /// Path template below the base URL: `/users/{login}/repos`.
    pub path: String,
    /// Query parameters: name → template (`{ q = "{query}", per_page = 20 }`).
    #[serde(default)]
    pub query: BTreeMap<String, Value>,
    /// Request headers: name → template.
    #[serde(default)]
    pub headers: BTreeMap<String, Value>,
    /// JSON body: `"arguments"` (the whole arguments object) or a table of fields.
    #[serde(default)]
    pub body: Option<BodyConfig>,
    /// Overrides the method's idempotency (GET/HEAD/PUT/DELETE/OPTIONS are; POST/PATCH are not),
    /// which decides whether the request may be retried.
    #[serde(default)]
    pub idempotent: Option<bool>,
}

impl ToolKind for RestTool {
    const NAME: &'static str = "REST";
    const KEYS: &'static [&'static str] = &["method", "path", "query", "headers", "body", "idempotent"];
}

fn default_method() -> String {
    "GET".to_owned()
}

/// Where the JSON body comes from.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum BodyConfig {
    /// `body = "arguments"`: the whole arguments object.
    Whole(WholeBody),
    /// `body = { field = "{arg}", fixed = 1 }`: a `"{arg}"` string keeps the argument's JSON
    /// type (omitted when absent), other strings interpolate, other values are literal.
    Fields(Map<String, Value>),
}

/// The one keyword of [`BodyConfig::Whole`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WholeBody {
    /// The arguments object as it arrived.
    Arguments,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: Value) -> RestConfig {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn defaults_and_policy_keys_sit_beside_tool_keys() {
        let c = parse(serde_json::json!({
            "base_urls": ["http://127.0.0.1:1"],
            "tools": [{"name": "t", "description": "d", "path": "/x", "confirm": true, "timeout_ms": 5, "typo": 1}],
        }));
        assert_eq!(c.retry, RetryConfig::default());
        assert_eq!(c.max_response_bytes, 1024 * 1024);
        let t = &c.tools[0];
        assert_eq!(t.kind.method, "GET");
        assert!(t.policy.confirm);
        assert_eq!(t.policy.timeout_ms, Some(5));
        assert_eq!(t.unknown.keys().collect::<Vec<_>>(), ["typo"]);
    }

    #[test]
    fn body_is_the_arguments_or_a_mapping() {
        let c = parse(serde_json::json!({
            "base_urls": ["http://h"],
            "tools": [
                {"name": "a", "description": "d", "path": "/", "method": "POST", "body": "arguments"},
                {"name": "b", "description": "d", "path": "/", "method": "POST", "body": {"x": "{y}"}},
            ],
        }));
        assert_eq!(c.tools[0].kind.body, Some(BodyConfig::Whole(WholeBody::Arguments)));
        assert!(matches!(c.tools[1].kind.body, Some(BodyConfig::Fields(_))));
    }

    #[test]
    fn auth_kinds_refuse_unknown_keys() {
        let ok: AuthConfig =
            serde_json::from_value(serde_json::json!({"kind": "api_key", "header": "X-Key", "secret_env": "K"}))
                .unwrap();
        assert!(matches!(ok, AuthConfig::ApiKey(_)));
        let bad = serde_json::from_value::<AuthConfig>(serde_json::json!({"kind": "bearer", "secret": "inline"}));
        assert!(bad.is_err());
    }
}
