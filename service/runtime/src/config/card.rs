//! `[server_card]`: the server card (SEP-2127, MCP Server Cards, a draft: off by default),
//! raw and validated. The card itself is made from the configuration with the registry
//! ([`crate::registry::card`]).

use schemars::JsonSchema;
use serde::Deserialize;

use super::ConfigError;

/// `[server_card]` as written.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawServerCard {
    /// Serve the card at `<server.path>/server-card` and `/.well-known/mcp/server-card`
    /// (default `false`: SEP-2127 is a draft).
    pub enabled: bool,
    /// The server's name in reverse-DNS form with one `/`: `com.example/tools` (its title
    /// and version are `[server]`'s).
    pub name: Option<String>,
    /// What the server offers, for people and registries.
    pub description: Option<String>,
    /// The server's home page or documentation.
    pub website_url: Option<String>,
    /// The endpoint's public URL (`https://mcp.example.com/mcp`); default: `[auth] resource`.
    /// Without either, the card names no remote.
    pub url: Option<String>,
}

/// `[server_card]`, validated and enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCardConfig {
    /// Reverse-DNS name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Home page.
    pub website_url: Option<String>,
    /// The endpoint's public URL, when known.
    pub url: Option<String>,
}

/// Validates `[server_card]` (`None` when off); `resource` is `[auth] resource`.
pub(super) fn server_card(
    raw: &RawServerCard,
    resource: Option<&str>,
) -> Result<Option<ServerCardConfig>, ConfigError> {
    if !raw.enabled {
        return Ok(None);
    }
    let name = raw.name.clone().filter(|n| !n.is_empty()).ok_or_else(|| {
        ConfigError::invalid(
            "server_card.name",
            "name the server in reverse-DNS form with one '/', e.g. \"com.example/tools\"",
        )
    })?;
    if !reverse_dns(&name) {
        return Err(ConfigError::invalid(
            "server_card.name",
            format!("'{name}' is not a reverse-DNS name with exactly one '/' (e.g. \"com.example/tools\")"),
        ));
    }
    for (key, value) in [("server_card.website_url", &raw.website_url), ("server_card.url", &raw.url)] {
        if let Some(v) = value
            && !(v.starts_with("https://") || v.starts_with("http://"))
        {
            return Err(ConfigError::invalid(key, format!("'{v}' is not an http(s):// URL")));
        }
    }
    Ok(Some(ServerCardConfig {
        name,
        description: raw.description.clone(),
        website_url: raw.website_url.clone(),
        url: raw.url.clone().or_else(|| resource.map(str::to_owned)),
    }))
}

/// `namespace/name`: a dotted namespace of letters, digits and `-`, one `/`, then a name of
/// letters, digits, `.`, `_` and `-` (the MCP registry's `server.json` rule).
fn reverse_dns(name: &str) -> bool {
    let Some((namespace, server)) = name.split_once('/') else { return false };
    let label = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    namespace.split('.').all(label)
        && namespace.contains('.')
        && !server.is_empty()
        && server.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_and_a_name_must_be_reverse_dns_with_one_slash() {
        assert_eq!(server_card(&RawServerCard::default(), None).unwrap(), None);
        let on = |name: &str| RawServerCard { enabled: true, name: Some(name.into()), ..Default::default() };
        let card = server_card(&on("com.example/tools"), Some("https://mcp.example.com/mcp")).unwrap().unwrap();
        assert_eq!(card.url.as_deref(), Some("https://mcp.example.com/mcp"), "the auth resource by default");
        for bad in ["tools", "com.example/a/b", "example/tools", "com..example/x", "com.example/"] {
            let e = server_card(&on(bad), None).unwrap_err().to_string();
            assert!(e.starts_with("server_card.name:"), "{bad}: {e}");
        }
        let e = server_card(&RawServerCard { enabled: true, ..Default::default() }, None).unwrap_err();
        assert!(e.to_string().contains("reverse-DNS"), "{e}");
    }
}
