//! `[console]`: the operator console in the browser, raw and validated. Off by default; when
//! on, it needs `[auth]` and at least one way to recognise an administrator, so turning it on
//! can never open it to anonymous or ordinary callers.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{AuthConfig, ConfigError};

/// `[console]` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawConsole {
    /// Serve the console (default `false`: no route, no layer, no sampling).
    pub enabled: bool,
    /// Its path, on the listener `listener` names.
    pub path: String,
    /// `main` (the MCP listener, default) or `metrics` (the `telemetry.metrics_listen` one).
    pub listener: String,
    /// Also answer peers that are not on a loopback address (default `false`).
    pub allow_remote: bool,
    /// Subjects of `[[auth.tokens]]` entries that are administrators.
    pub admin_subjects: Vec<String>,
    /// OAuth: a token carrying every one of these scopes is an administrator.
    pub admin_scopes: Vec<String>,
    /// OAuth: a token whose claims meet all of these (`claim = "value"`; an array claim
    /// contains it) is an administrator.
    pub admin_claims: BTreeMap<String, String>,
    /// How many recent calls of this replica the Calls page lists.
    pub recent_calls: usize,
    /// Show the arguments of recent calls (default `false`: they may carry personal data).
    pub show_arguments: bool,
}

impl Default for RawConsole {
    fn default() -> Self {
        Self {
            enabled: false,
            path: "/console".to_owned(),
            listener: "main".to_owned(),
            allow_remote: false,
            admin_subjects: Vec::new(),
            admin_scopes: Vec::new(),
            admin_claims: BTreeMap::new(),
            recent_calls: 100,
            show_arguments: false,
        }
    }
}

/// Which listener serves the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleListener {
    /// The MCP endpoint's listener.
    Main,
    /// `telemetry.metrics_listen`.
    Metrics,
}

/// `[console]`, validated and enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleConfig {
    /// Path prefix (`/console`): the page there, its API under `<path>/api/`.
    pub path: String,
    /// Where it is served.
    pub listener: ConsoleListener,
    /// Non-loopback peers are answered too.
    pub allow_remote: bool,
    /// Static-token subjects that are administrators.
    pub admin_subjects: Vec<String>,
    /// Scopes that make an OAuth caller an administrator (all of them).
    pub admin_scopes: Vec<String>,
    /// Claim conditions that make an OAuth caller an administrator (all of them).
    pub admin_claims: BTreeMap<String, String>,
    /// Length of the recent-calls ring.
    pub recent_calls: usize,
    /// Arguments appear in the recent calls.
    pub show_arguments: bool,
}

pub(super) fn console(
    raw: &RawConsole,
    auth: Option<&AuthConfig>,
    metrics_listener: bool,
    mcp_path: &str,
) -> Result<Option<ConsoleConfig>, ConfigError> {
    if !raw.enabled {
        return Ok(None);
    }
    let path = raw.path.trim_end_matches('/');
    if !path.starts_with('/') || path.len() < 2 || path.contains(['?', '#', '*', ':', '{']) {
        return Err(ConfigError::invalid(
            "console.path",
            format!("'{}' must be a plain path such as /console", raw.path),
        ));
    }
    // Paths something else already answers (the router would refuse the overlap at start-up).
    let taken = [mcp_path, "/healthz", "/readyz", "/metrics"];
    if taken.iter().any(|t| path == *t || t.starts_with(&format!("{path}/"))) || path.starts_with("/.well-known") {
        return Err(ConfigError::invalid(
            "console.path",
            format!(
                "'{path}' is taken by the MCP endpoint, the probes, /metrics or /.well-known; pick another, such as /console"
            ),
        ));
    }
    let listener = match raw.listener.as_str() {
        "main" => ConsoleListener::Main,
        "metrics" if metrics_listener => ConsoleListener::Metrics,
        "metrics" => {
            return Err(ConfigError::invalid(
                "console.listener",
                "'metrics' needs telemetry.metrics_listen (the address of that listener)",
            ));
        }
        other => {
            return Err(ConfigError::invalid("console.listener", format!("'{other}' is neither main nor metrics")));
        }
    };
    if auth.is_none() {
        return Err(ConfigError::invalid(
            "console.enabled",
            "the console needs [auth] (the same bearer tokens as the MCP endpoint) and an administrator rule",
        ));
    }
    if raw.admin_subjects.is_empty() && raw.admin_scopes.is_empty() && raw.admin_claims.is_empty() {
        return Err(ConfigError::invalid(
            "console",
            "name the administrators: admin_subjects (static token subjects), admin_scopes or admin_claims (OAuth)",
        ));
    }
    if raw.recent_calls == 0 || raw.recent_calls > 10_000 {
        return Err(ConfigError::invalid("console.recent_calls", "must be between 1 and 10000"));
    }
    Ok(Some(ConsoleConfig {
        path: path.to_owned(),
        listener,
        allow_remote: raw.allow_remote,
        admin_subjects: raw.admin_subjects.clone(),
        admin_scopes: raw.admin_scopes.clone(),
        admin_claims: raw.admin_claims.clone(),
        recent_calls: raw.recent_calls,
        show_arguments: raw.show_arguments,
    }))
}

#[cfg(test)]
mod tests {
    use crate::Config;

    const AUTH: &str = "[[auth.tokens]]\nsubject = \"ops\"\nsecret = \"0123456789abcdef0123\"\n";

    #[test]
    fn off_by_default() {
        assert!(Config::from_toml("").unwrap().console.is_none());
    }

    #[test]
    fn on_needs_auth_and_an_admin_rule() {
        let e = Config::from_toml("[console]\nenabled = true\nadmin_subjects = [\"ops\"]").unwrap_err().to_string();
        assert!(e.contains("console.enabled") && e.contains("[auth]"), "{e}");
        let e = Config::from_toml(&format!("{AUTH}[console]\nenabled = true")).unwrap_err().to_string();
        assert!(e.contains("admin_subjects"), "{e}");
        let e = Config::from_toml(&format!(
            "{AUTH}[console]\nenabled = true\nadmin_subjects = [\"ops\"]\nlistener = \"metrics\""
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("telemetry.metrics_listen"), "{e}");
        for taken in ["/mcp", "/healthz", "/", "/.well-known/x"] {
            let e = Config::from_toml(&format!(
                "{AUTH}[console]\nenabled = true\nadmin_subjects = [\"ops\"]\npath = \"{taken}\""
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains("console.path"), "{taken}: {e}");
        }
        let c = Config::from_toml(&format!(
            "{AUTH}[console]\nenabled = true\nadmin_subjects = [\"ops\"]\npath = \"/ops/\""
        ))
        .unwrap();
        let console = c.console.unwrap();
        assert_eq!(console.path, "/ops");
        assert!(!console.allow_remote);
    }
}
