//! `[auth]`, validated: static bearer tokens, trusted JWT issuers, the accepted audiences and
//! the access rules per tool, prompt and resource (MCP 2026-07-28 basic/authorization).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::{Environment, SecretSource};

use super::{ConfigError, Secret, raw};

/// `[auth]`, validated.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// SHA-256 of each accepted static token → its subject.
    pub tokens: HashMap<[u8; 32], Arc<str>>,
    /// Canonical URL of this server (Protected Resource Metadata `resource`, RFC 8707).
    pub resource: Option<String>,
    /// Authorization servers for the metadata document.
    pub authorization_servers: Vec<String>,
    /// Scopes advertised in the metadata document and in 401 challenges.
    pub scopes_supported: Vec<String>,
    /// Tolerated clock skew on `exp` / `nbf`.
    pub leeway: Duration,
    /// Trusted issuers of JWT access tokens.
    pub issuers: Vec<IssuerConfig>,
    /// RFC 7662 endpoints for opaque tokens.
    pub introspection: Vec<IntrospectionConfig>,
    /// Access rules; an item without one is open to every authenticated caller.
    pub rules: AccessRules,
    /// The virtual endpoints' own resource and scopes, by path ([`AuthConfig::with_endpoints`]).
    pub endpoints: HashMap<String, EndpointAccess>,
}

/// What a virtual endpoint asks of its callers beyond `[auth]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointAccess {
    /// Its canonical URL: its metadata's `resource`, an audience accepted there only.
    pub resource: Option<String>,
    /// Scopes every request to it needs.
    pub scopes: Vec<String>,
}

impl AuthConfig {
    /// Takes the virtual endpoints: each one's resource (as written, else `resource`'s origin
    /// and its path) becomes an audience every issuer accepts, but only on that endpoint
    /// ([`AuthConfig::audience_here`]); `endpoints[i].scopes` without `[auth]` is refused by the
    /// caller.
    pub fn with_endpoints(mut self, endpoints: &[super::endpoints::Endpoint]) -> Self {
        let origin = self.resource.as_deref().map(|r| {
            let start = r.find("://").map_or(0, |i| i + 3);
            r[..r[start..].find('/').map_or(r.len(), |i| start + i)].to_owned()
        });
        for e in endpoints {
            let resource = e.resource.clone().or_else(|| origin.as_ref().map(|o| format!("{o}{}", e.path)));
            if let Some(r) = &resource {
                for audiences in self
                    .issuers
                    .iter_mut()
                    .map(|i| &mut i.audiences)
                    .chain(self.introspection.iter_mut().map(|i| &mut i.audiences))
                {
                    if !audiences.contains(r) {
                        audiences.push(r.clone());
                    }
                }
            }
            self.endpoints.insert(e.path.clone(), EndpointAccess { resource, scopes: e.scopes.clone() });
        }
        self
    }

    /// The resource a request to `path` (`server.path` or a virtual endpoint's) is for.
    pub fn resource_for(&self, path: &str) -> Option<&str> {
        match self.endpoints.get(path) {
            Some(e) => e.resource.as_deref(),
            None => self.resource.as_deref(),
        }
    }

    /// Whether a token for `audiences` may be used at `path`: an endpoint's own resource is an
    /// audience of that endpoint only; every other accepted audience holds everywhere.
    pub fn audience_here(&self, audiences: &[&str], path: &str) -> bool {
        let own = self.endpoints.get(path).and_then(|e| e.resource.as_deref());
        let elsewhere = |a: &str| {
            Some(a) != own
                && Some(a) != self.resource.as_deref()
                && self.endpoints.values().any(|e| e.resource.as_deref() == Some(a))
        };
        audiences.is_empty() || audiences.iter().any(|a| !elsewhere(a))
    }
}

/// One trusted issuer of JWT access tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerConfig {
    /// The exact `iss`.
    pub issuer: String,
    /// Its key set; `None`: discovered from its metadata (RFC 8414, then OpenID discovery).
    pub jwks_uri: Option<String>,
    /// Accepted `aud` values (at least one).
    pub audiences: Vec<String>,
    /// Background refresh period of the key set.
    pub refresh: Duration,
    /// Least time between two fetches caused by unknown `kid`s.
    pub min_interval: Duration,
}

/// One RFC 7662 introspection endpoint.
#[derive(Debug, Clone)]
pub struct IntrospectionConfig {
    /// The endpoint URL.
    pub endpoint: String,
    /// The issuer of its tokens.
    pub issuer: String,
    /// The runtime's client id there.
    pub client_id: String,
    /// The runtime's client secret there.
    pub client_secret: Secret,
    /// Accepted `aud` values (when the answer carries `aud`).
    pub audiences: Vec<String>,
}

/// What a caller needs for one item: every scope, and every claim condition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessRule {
    /// Required scopes.
    pub scopes: Vec<String>,
    /// `claim → value`: the claim equals the value or, when an array, contains it.
    pub claims: BTreeMap<String, String>,
}

/// Access rules by kind and name.
#[derive(Debug, Clone, Default)]
pub struct AccessRules {
    /// By tool name.
    pub tools: HashMap<String, AccessRule>,
    /// By prompt name.
    pub prompts: HashMap<String, AccessRule>,
    /// By resource URI.
    pub resources: HashMap<String, AccessRule>,
}

impl AccessRules {
    /// True when no item has a rule: every authenticated caller sees the same lists.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.prompts.is_empty() && self.resources.is_empty()
    }
}

pub(super) fn auth(raw: &raw::RawAuth, env: &Environment) -> Result<AuthConfig, ConfigError> {
    if raw.tokens.is_empty() && raw.issuers.is_empty() && raw.introspection.is_empty() {
        return Err(ConfigError::invalid(
            "auth",
            "[auth] needs at least one [[auth.tokens]], [[auth.issuers]] or [[auth.introspection]] entry",
        ));
    }
    let mut tokens = HashMap::new();
    for (i, t) in raw.tokens.iter().enumerate() {
        let key = format!("auth.tokens[{i}]");
        if t.subject.is_empty() {
            return Err(ConfigError::invalid(format!("{key}.subject"), "must not be empty"));
        }
        let token = SecretSource::new(&key, t.secret_env.as_deref(), t.secret_file.as_deref())
            .or_inline(t.secret.as_deref())
            .resolve(env)?;
        // Offline, the token is not read: its length and uniqueness wait for the real check.
        if token.is_unresolved() {
            continue;
        }
        if token.expose().len() < 16 {
            return Err(ConfigError::invalid(
                key,
                "tokens must be at least 16 characters (generate one with: openssl rand -hex 32)",
            ));
        }
        let digest: [u8; 32] =
            ring::digest::digest(&ring::digest::SHA256, token.expose()).as_ref().try_into().expect("32-byte digest");
        if tokens.insert(digest, Arc::from(t.subject.as_str())).is_some() {
            return Err(ConfigError::invalid(key, "this token is listed twice"));
        }
    }
    let mut audiences: Vec<String> = raw.resource.iter().chain(&raw.audiences).cloned().collect();
    audiences.dedup();
    let mut issuers = Vec::new();
    for (i, r) in raw.issuers.iter().enumerate() {
        let key = format!("auth.issuers[{i}]");
        if !is_http_url(&r.issuer) {
            return Err(ConfigError::invalid(
                format!("{key}.issuer"),
                "must be an http(s) URL (the exact `iss` value)",
            ));
        }
        if let Some(uri) = r.jwks_uri.as_deref().filter(|u| !is_http_url(u)) {
            return Err(ConfigError::invalid(format!("{key}.jwks_uri"), format!("{uri:?} is not an http(s) URL")));
        }
        let audiences = r.audiences.clone().unwrap_or_else(|| audiences.clone());
        if audiences.is_empty() {
            return Err(ConfigError::invalid(
                format!("{key}.audiences"),
                "no accepted audience: set auth.resource (this server's URL), auth.audiences or this issuer's audiences",
            ));
        }
        if r.jwks_refresh_seconds == 0 || r.jwks_min_interval_ms == 0 {
            return Err(ConfigError::invalid(key, "jwks_refresh_seconds and jwks_min_interval_ms must be at least 1"));
        }
        if issuers.iter().any(|x: &IssuerConfig| x.issuer == r.issuer) {
            return Err(ConfigError::invalid(format!("{key}.issuer"), "this issuer is listed twice"));
        }
        issuers.push(IssuerConfig {
            issuer: r.issuer.clone(),
            jwks_uri: r.jwks_uri.clone(),
            audiences,
            refresh: Duration::from_secs(r.jwks_refresh_seconds),
            min_interval: Duration::from_millis(r.jwks_min_interval_ms),
        });
    }
    let mut introspection = Vec::new();
    for (i, r) in raw.introspection.iter().enumerate() {
        let key = format!("auth.introspection[{i}]");
        if !is_http_url(&r.endpoint) {
            return Err(ConfigError::invalid(format!("{key}.endpoint"), "must be an http(s) URL"));
        }
        let client_secret = SecretSource::new(&key, r.client_secret_env.as_deref(), r.client_secret_file.as_deref())
            .stem("client_secret")
            .or_inline(r.client_secret.as_deref())
            .resolve(env)?;
        introspection.push(IntrospectionConfig {
            endpoint: r.endpoint.clone(),
            issuer: r.issuer.clone(),
            client_id: r.client_id.clone(),
            client_secret,
            audiences: r.audiences.clone().unwrap_or_else(|| audiences.clone()),
        });
    }
    let rules = |kind: &str, raw: &BTreeMap<String, raw::RawAccessRule>| -> Result<HashMap<_, _>, ConfigError> {
        raw.iter()
            .map(|(name, r)| {
                if r.scopes.iter().any(|s| s.is_empty() || s.contains([' ', '"', '\\'])) {
                    return Err(ConfigError::invalid(
                        format!("auth.{kind}.{name}.scopes"),
                        "a scope is a non-empty word without spaces, quotes or backslashes (RFC 6749 §3.3)",
                    ));
                }
                Ok((name.clone(), AccessRule { scopes: r.scopes.clone(), claims: r.claims.clone() }))
            })
            .collect()
    };
    Ok(AuthConfig {
        tokens,
        resource: raw.resource.clone(),
        authorization_servers: raw.authorization_servers.clone(),
        scopes_supported: raw.scopes_supported.clone(),
        leeway: Duration::from_secs(raw.leeway_seconds.unwrap_or(30)),
        issuers,
        introspection,
        rules: AccessRules {
            tools: rules("tools", &raw.tools)?,
            prompts: rules("prompts", &raw.prompts)?,
            resources: rules("resources", &raw.resources)?,
        },
        endpoints: HashMap::new(),
    })
}

fn is_http_url(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://")) && s.len() > "https://".len()
}
