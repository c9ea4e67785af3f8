//! Host and Origin allow-lists: the DNS-rebinding defence (MCP 2026-07-28 basic/transports/streamable-http § Security warning (Origin), conformance
//! `dns-rebinding-protection`). Checked on the MCP endpoint before anything else.

/// Names accepted in `Host` when none are configured.
const LOCAL_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// Which `Host` headers are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    /// Lower-case host names without port; empty means any.
    names: Vec<String>,
}

impl HostPolicy {
    /// The localhost names only (`server.allowed_hosts` unset).
    pub fn localhost() -> Self {
        Self { names: LOCAL_HOSTS.iter().map(|h| (*h).to_owned()).collect() }
    }

    /// From `server.allowed_hosts`: empty → localhost names; `"*"` → any.
    pub fn new(configured: &[String]) -> Result<Self, String> {
        if configured.iter().any(|h| h == "*") {
            return Ok(Self { names: Vec::new() });
        }
        if configured.is_empty() {
            return Ok(Self::localhost());
        }
        let names: Vec<String> = configured.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
        if let Some(bad) = names.iter().find(|h| h.is_empty() || h.contains(['/', ' '])) {
            return Err(format!("'{bad}' is not a host name (write e.g. \"mcp.example.com\", without scheme or path)"));
        }
        Ok(Self { names })
    }

    /// True when only the localhost names are accepted (`server.allowed_hosts` unset).
    pub fn is_loopback_only(&self) -> bool {
        !self.names.is_empty() && self.names.iter().all(|n| LOCAL_HOSTS.contains(&n.as_str()))
    }

    /// True when `host` (a `Host` header value, possibly with a port) is accepted.
    pub fn allows(&self, host: &str) -> bool {
        if self.names.is_empty() {
            return true;
        }
        let name = strip_port(host);
        self.names.iter().any(|n| n.eq_ignore_ascii_case(name))
    }
}

/// Which `Origin` headers are accepted. A request without `Origin` (non-browser clients)
/// is always accepted; the Host check still applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginPolicy {
    /// Any origin.
    Any,
    /// Origins whose host is a localhost name, any scheme and port.
    Localhost,
    /// Exactly these `scheme://host[:port]` values (case-insensitive).
    List(Vec<String>),
}

impl OriginPolicy {
    /// From `server.allowed_origins`: empty → localhost; `"*"` → any.
    pub fn new(configured: &[String]) -> Result<Self, String> {
        if configured.iter().any(|o| o == "*") {
            return Ok(Self::Any);
        }
        if configured.is_empty() {
            return Ok(Self::Localhost);
        }
        let list: Vec<String> =
            configured.iter().map(|o| o.trim().trim_end_matches('/').to_ascii_lowercase()).collect();
        if let Some(bad) = list.iter().find(|o| !(o.starts_with("http://") || o.starts_with("https://"))) {
            return Err(format!("'{bad}' is not an origin (write e.g. \"https://app.example.com\")"));
        }
        Ok(Self::List(list))
    }

    /// True when `origin` is accepted.
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Localhost => origin
                .split_once("://")
                .is_some_and(|(_, rest)| LOCAL_HOSTS.iter().any(|h| h.eq_ignore_ascii_case(strip_port(rest)))),
            Self::List(list) => list.iter().any(|o| o.eq_ignore_ascii_case(origin.trim_end_matches('/'))),
        }
    }
}

/// `example.com:8080` → `example.com`; `[::1]:8080` → `[::1]`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(
        host,
        |(name, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_by_default() {
        let h = HostPolicy::new(&[]).unwrap();
        for ok in ["localhost", "localhost:8080", "127.0.0.1:3000", "[::1]:80", "LOCALHOST"] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in ["evil.example.com", "evil.example.com:8080", "127.0.0.1.nip.io", "localhost.evil"] {
            assert!(!h.allows(bad), "{bad}");
        }
        let o = OriginPolicy::new(&[]).unwrap();
        assert!(o.allows("http://localhost:5173"));
        assert!(o.allows("https://127.0.0.1"));
        assert!(!o.allows("https://evil.example.com"));
        assert!(!o.allows("null"));
    }

    #[test]
    fn configured_lists() {
        let h = HostPolicy::new(&["MCP.example.com".to_owned()]).unwrap();
        assert!(h.allows("mcp.example.com:443"));
        assert!(!h.allows("localhost"));
        let o = OriginPolicy::new(&["https://app.example.com/".to_owned()]).unwrap();
        assert!(o.allows("https://app.example.com"));
        assert!(!o.allows("http://app.example.com"));
        assert!(HostPolicy::new(&["*".to_owned()]).unwrap().allows("anything"));
        assert!(OriginPolicy::new(&["app.example.com".to_owned()]).is_err());
    }
}
