//! `[user_auth]` and `[[upstream_auth]]`, raw and validated: each caller's own access to an
//! upstream that trusts another authorization server (docs/user-auth.md). An adapter names an
//! `[[upstream_auth]]` entry with `user_auth = "<name>"`; a caller who has not connected that
//! upstream yet is sent, by URL elicitation, through a browser sign-in here and the upstream's
//! own consent, and the token the upstream's authorization server grants is kept, encrypted,
//! in the vault.

use std::time::Duration;

use mcp_adapter_api::{Environment, SecretSource};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{AdapterConfig, AdapterKind, AuthConfig, Problems, Secret, raw, shared};

/// `[user_auth]` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawUserAuth {
    /// Where browsers reach this runtime (`https://mcp.example.com`): the sign-in and every
    /// upstream's authorization server send them back to `<public_url>/oauth/callback`.
    pub public_url: Option<String>,
    /// How long a connect link, and the sign-in and consent it starts, stay valid.
    pub link_ttl_seconds: u64,
    /// How long a connection is kept without use of its refresh token (days).
    pub vault_ttl_days: u64,
    /// The runtime as a client of the identity provider `[auth]` trusts: a person who opens a
    /// connect link signs in there first, so a link reaches nobody but the caller it was made for.
    pub sign_in: Option<RawClient>,
    /// The vault's key ring (AES-256-GCM; the first key seals, every key opens). Empty: a
    /// random per-process key, for one replica without `[redis]` only.
    pub vault_keys: Vec<raw::RawKey>,
}

impl Default for RawUserAuth {
    fn default() -> Self {
        Self { public_url: None, link_ttl_seconds: 600, vault_ttl_days: 30, sign_in: None, vault_keys: Vec::new() }
    }
}

/// An OAuth client of the runtime: at the sign-in's identity provider, or at an upstream's
/// authorization server (`[[upstream_auth]]`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawClient {
    /// The upstream's name, for adapters' `user_auth` (`[[upstream_auth]]` only).
    pub name: Option<String>,
    /// The authorization server's issuer URL: its endpoints are discovered from its metadata
    /// (RFC 8414, then OpenID Connect Discovery).
    pub issuer: Option<String>,
    /// Its authorization endpoint, when it publishes no metadata (with `token_endpoint`).
    pub authorization_endpoint: Option<String>,
    /// Its token endpoint, when it publishes no metadata.
    pub token_endpoint: Option<String>,
    /// The runtime's client id there.
    pub client_id: String,
    /// Environment variable holding the client secret (none: a public client, PKCE only).
    pub client_secret_env: Option<String>,
    /// File holding the client secret.
    pub client_secret_file: Option<String>,
    /// The client secret inline (tests and local use only).
    pub client_secret: Option<String>,
    /// Scopes to ask for.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The RFC 8707 resource to ask a token for (the upstream API's URL).
    pub resource: Option<String>,
}

/// An OAuth client, validated.
#[derive(Debug, Clone)]
pub struct OAuthClient {
    /// Upstream name (`[[upstream_auth]]`), or `sign_in`.
    pub name: String,
    /// Issuer URL, when its endpoints are discovered (and the `iss` of its answers, RFC 9207).
    pub issuer: Option<String>,
    /// Explicit endpoints (`authorization`, `token`), when not discovered.
    pub endpoints: Option<(String, String)>,
    /// Client id.
    pub client_id: String,
    /// Client secret (client_secret_basic), when confidential.
    pub client_secret: Option<Secret>,
    /// Scopes asked for.
    pub scopes: Vec<String>,
    /// RFC 8707 resource.
    pub resource: Option<String>,
}

/// `[user_auth]` with its upstreams, validated.
#[derive(Debug, Clone)]
pub struct UserAuthConfig {
    /// The runtime's public base URL, without a trailing `/`.
    pub public_url: String,
    /// Lifetime of a connect link and of the flows it starts.
    pub link_ttl: Duration,
    /// Lifetime of a vault entry.
    pub vault_ttl: Duration,
    /// The sign-in client at the identity provider `[auth]` trusts.
    pub sign_in: OAuthClient,
    /// The vault's key ring; empty: a per-process key.
    pub vault_keys: Vec<(String, Secret)>,
    /// `[[upstream_auth]]`, by name.
    pub upstreams: Vec<OAuthClient>,
}

impl UserAuthConfig {
    /// The upstream named `name`.
    pub fn upstream(&self, name: &str) -> Option<&OAuthClient> {
        self.upstreams.iter().find(|u| u.name == name)
    }

    /// Where the sign-in and the upstreams send browsers back.
    pub fn callback(&self) -> String {
        format!("{}/oauth/callback", self.public_url)
    }
}

/// Validates `[user_auth]` and `[[upstream_auth]]` against `[auth]` and the adapters naming
/// an upstream; problems go to `problems`.
pub(super) fn user_auth(
    raw: Option<&RawUserAuth>,
    upstreams: &[RawClient],
    auth: Option<&AuthConfig>,
    adapters: &[AdapterConfig],
    redis: bool,
    env: &Environment,
    problems: &mut Problems,
) -> Option<UserAuthConfig> {
    let named: Vec<(usize, &AdapterConfig, &str)> =
        adapters.iter().enumerate().filter_map(|(i, a)| a.user_auth.as_deref().map(|u| (i, a, u))).collect();
    let Some(raw) = raw else {
        if !upstreams.is_empty() {
            problems.add(
                "upstream_auth",
                "callers connect these upstreams through this runtime: add [user_auth] with public_url and sign_in",
            );
        }
        for (i, _, _) in named {
            problems.add(
                format!("adapters[{i}].user_auth"),
                "names an upstream of [[upstream_auth]], which needs [user_auth] (public_url, sign_in) too",
            );
        }
        return None;
    };
    let start = problems.len();
    let public_url = match raw.public_url.as_deref().map(|u| u.trim_end_matches('/')) {
        Some(u) if u.starts_with("https://") || u.starts_with("http://") => u.to_owned(),
        Some(u) => {
            problems.add("user_auth.public_url", format!("'{u}' is not an http(s):// URL"));
            String::new()
        }
        None => {
            problems.add(
                "user_auth.public_url",
                "is required: where browsers reach this runtime (https://mcp.example.com); register \
                 <public_url>/oauth/callback as a redirect URI with the identity provider and each upstream",
            );
            String::new()
        }
    };
    if raw.link_ttl_seconds == 0 || raw.link_ttl_seconds > 3600 {
        problems.add("user_auth.link_ttl_seconds", "must be between 1 and 3600 (an hour)");
    }
    if raw.vault_ttl_days == 0 {
        problems.add("user_auth.vault_ttl_days", "must be at least 1");
    }
    let mut sign_in = match &raw.sign_in {
        Some(c) => client("user_auth.sign_in", "sign_in", c, env, problems),
        None => {
            problems.add(
                "user_auth.sign_in",
                "is required: the runtime's client at your identity provider (issuer, client_id), so a person \
                 who opens a connect link is known to be the caller it was made for",
            );
            None
        }
    };
    match (auth, &sign_in) {
        (None, _) => problems.add(
            "user_auth",
            "connections belong to authenticated callers: configure [auth] with the issuer of user_auth.sign_in",
        ),
        (Some(a), Some(s)) => {
            let trusted = s.issuer.as_deref().is_some_and(|i| a.issuers.iter().any(|t| t.issuer == i));
            if !trusted {
                problems.add(
                    "user_auth.sign_in.issuer",
                    "must be one of [auth] issuers: the sign-in's token must prove the same identity calls carry",
                );
            }
            if a.resource.is_none() {
                problems.add(
                    "auth.resource",
                    "is required with [user_auth]: the sign-in asks for a token for this resource (RFC 8707)",
                );
            }
        }
        _ => {}
    }
    // The sign-in asks for a token for this runtime, by default with OpenID's scope.
    if let Some(s) = sign_in.as_mut() {
        if s.resource.is_none() {
            s.resource = auth.and_then(|a| a.resource.clone());
        }
        if s.scopes.is_empty() {
            s.scopes.push("openid".to_owned());
        }
    }
    let vault_keys = shared::key_ring("user_auth.vault_keys", &raw.vault_keys, env).unwrap_or_else(|e| {
        problems.ok::<(), _>(Err(e));
        Vec::new()
    });
    if redis && raw.vault_keys.is_empty() {
        problems.add(
            "user_auth.vault_keys",
            "is required with [redis]: every replica must open every connection (generate a key with: \
             openssl rand -base64 32)",
        );
    }
    let mut clients: Vec<OAuthClient> = Vec::with_capacity(upstreams.len());
    for (i, u) in upstreams.iter().enumerate() {
        let key = format!("upstream_auth[{i}]");
        let Some(name) = u.name.clone().filter(|n| !n.is_empty()) else {
            problems.add(format!("{key}.name"), "is required: adapters name the upstream with user_auth = \"<name>\"");
            continue;
        };
        if clients.iter().any(|c| c.name == name) {
            problems.add(format!("{key}.name"), format!("'{name}' is used twice"));
            continue;
        }
        if let Some(c) = client(&key, &name, u, env, problems) {
            clients.push(c);
        }
    }
    for (i, a, upstream) in named {
        let key = format!("adapters[{i}].user_auth");
        if !matches!(a.kind, AdapterKind::Rest(_) | AdapterKind::OpenApi(_) | AdapterKind::Mcp(_)) {
            problems.add(
                key,
                format!(
                    "a {} adapter cannot send a caller's own token; user_auth is for rest, openapi and mcp adapters",
                    a.kind.as_str()
                ),
            );
        } else if !upstreams.iter().any(|u| u.name.as_deref() == Some(upstream)) {
            let names: Vec<&str> = upstreams.iter().filter_map(|u| u.name.as_deref()).collect();
            let hint = mcp_adapter_api::closest(upstream, names.iter().copied())
                .map(|n| format!(" (did you mean '{n}'?)"))
                .unwrap_or_default();
            problems.add(key, format!("'{upstream}' is not the name of an [[upstream_auth]] entry{hint}"));
        }
    }
    let sign_in = sign_in?;
    (problems.len() == start).then(|| UserAuthConfig {
        public_url,
        link_ttl: Duration::from_secs(raw.link_ttl_seconds),
        vault_ttl: Duration::from_secs(raw.vault_ttl_days * 24 * 3600),
        sign_in,
        vault_keys,
        upstreams: clients,
    })
}

/// One client: where its authorization server is, who the runtime is there.
fn client(key: &str, name: &str, raw: &RawClient, env: &Environment, problems: &mut Problems) -> Option<OAuthClient> {
    let start = problems.len();
    let url = |k: &str, v: &str| {
        (v.starts_with("https://") || v.starts_with("http://"))
            .then_some(())
            .ok_or_else(|| super::ConfigError::invalid(format!("{key}.{k}"), format!("'{v}' is not an http(s):// URL")))
    };
    for (k, v) in [
        ("issuer", &raw.issuer),
        ("authorization_endpoint", &raw.authorization_endpoint),
        ("token_endpoint", &raw.token_endpoint),
        ("resource", &raw.resource),
    ] {
        if let Some(v) = v {
            problems.ok(url(k, v));
        }
    }
    let endpoints = match (&raw.issuer, &raw.authorization_endpoint, &raw.token_endpoint) {
        (_, Some(a), Some(t)) => Some((a.clone(), t.clone())),
        (Some(_), None, None) => None,
        (None, None, None) => {
            problems.add(
                key,
                "name the authorization server: issuer (its metadata is discovered), or authorization_endpoint \
                 and token_endpoint",
            );
            None
        }
        _ => {
            problems.add(key, "set both authorization_endpoint and token_endpoint, or neither (with issuer)");
            None
        }
    };
    if raw.client_id.is_empty() {
        problems.add(format!("{key}.client_id"), "is required: the runtime's client id at this authorization server");
    }
    if name == "sign_in" && raw.name.is_some() {
        problems.add(format!("{key}.name"), "is for [[upstream_auth]] entries only");
    }
    let secret = if raw.client_secret_env.is_some() || raw.client_secret_file.is_some() || raw.client_secret.is_some() {
        problems.ok(SecretSource::new(key, raw.client_secret_env.as_deref(), raw.client_secret_file.as_deref())
            .stem("client_secret")
            .or_inline(raw.client_secret.as_deref())
            .resolve(env))
    } else {
        None
    };
    (problems.len() == start).then(|| OAuthClient {
        name: name.to_owned(),
        issuer: raw.issuer.clone(),
        endpoints,
        client_id: raw.client_id.clone(),
        client_secret: secret,
        scopes: raw.scopes.clone(),
        resource: raw.resource.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    const AUTH: &str =
        "[auth]\nresource = \"https://mcp.example.com/mcp\"\n[[auth.issuers]]\nissuer = \"https://idp.example.com\"\n";
    const USER_AUTH: &str = "[user_auth]\npublic_url = \"https://mcp.example.com/\"\n[user_auth.sign_in]\n\
                             issuer = \"https://idp.example.com\"\nclient_id = \"mcp\"\n";
    const UPSTREAM: &str = "[[upstream_auth]]\nname = \"github\"\nauthorization_endpoint = \"https://github.com/a\"\n\
                            token_endpoint = \"https://github.com/t\"\nclient_id = \"abc\"\nclient_secret = \"s\"\n";
    const ADAPTER: &str = "[[adapters]]\nname = \"gh\"\nkind = \"rest\"\nbase_urls = [\"https://api.github.com\"]\n\
                           user_auth = \"github\"\n[[adapters.tools]]\nname = \"me\"\ndescription = \"me\"\npath = \"/user\"\n";

    fn problems(text: &str) -> String {
        Config::from_toml(text).map(|_| String::new()).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn a_full_section_loads_with_the_sign_in_asking_for_this_runtime() {
        let config = Config::from_toml(&format!("{AUTH}{USER_AUTH}{UPSTREAM}{ADAPTER}")).unwrap();
        let u = config.user_auth.expect("[user_auth]");
        assert_eq!(u.callback(), "https://mcp.example.com/oauth/callback", "no double slash");
        assert_eq!(u.sign_in.resource.as_deref(), Some("https://mcp.example.com/mcp"), "[auth] resource");
        assert_eq!(u.sign_in.scopes, ["openid"]);
        assert_eq!(u.upstream("github").unwrap().endpoints.as_ref().unwrap().1, "https://github.com/t");
        assert_eq!(config.adapters[0].user_auth.as_deref(), Some("github"));
    }

    #[test]
    fn each_missing_part_is_named_with_its_fix() {
        let e = problems(&format!("{AUTH}{UPSTREAM}{ADAPTER}"));
        assert!(
            e.contains("upstream_auth: callers connect these upstreams through this runtime: add [user_auth]"),
            "{e}"
        );
        assert!(e.contains("adapters[0].user_auth") || e.contains("adapters.gh.user_auth"), "{e}");
        let e = problems(&format!("{USER_AUTH}{UPSTREAM}"));
        assert!(e.contains("configure [auth] with the issuer of user_auth.sign_in"), "{e}");
        let e = problems(&format!("{AUTH}[user_auth]\npublic_url = \"https://m\"\n"));
        assert!(e.contains("user_auth.sign_in: is required"), "{e}");
        let e = problems(&format!("{AUTH}{USER_AUTH}[redis]\nurl = \"redis://127.0.0.1:6379\"\n"));
        assert!(e.contains("user_auth.vault_keys: is required with [redis]"), "{e}");
        let e = problems(&format!("{AUTH}{USER_AUTH}{UPSTREAM}{}", ADAPTER.replace("\"github\"\n[[", "\"gthub\"\n[[")));
        assert!(e.contains("'gthub' is not the name of an [[upstream_auth]] entry (did you mean 'github'?)"), "{e}");
    }
}
