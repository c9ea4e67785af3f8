//! The operator console's data: what the browser pages show, built from the replica's state
//! on demand (never on the request path), and the task that samples the counters for the
//! charts and publishes this replica's heartbeat. The HTTP side (routes, the admin check,
//! assets) is `http::console`; none of this exists unless `[console]` is enabled.
//!
//! - [`views`]: the JSON of each page (overview, catalog, adapters, calls, redacted config).
//! - [`sample`]: the sampling and heartbeat task.
//! - [`approvals`]: definitions approved from the Endpoints page (`[pinning]`), shared through Redis.

pub mod approvals;
pub mod sample;
pub mod views;

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use mcp_adapter_api::Identity;

use crate::Config;
use crate::auth::policy;
use crate::config::{AccessRule, ConsoleConfig, ConsoleListener};

/// `mcp-runtime console on URL`, the start-up line for people, when the console is on: its
/// page on the listener it is on (`main` at `main`, `metrics` at `metrics`, plain HTTP), an
/// unspecified address shown as loopback (the console answers loopback peers unless told
/// otherwise, so that is the URL to open on this machine).
pub fn start_line(config: &Config, main_scheme: &str, main: SocketAddr, metrics: Option<SocketAddr>) -> Option<String> {
    let console = config.console.as_ref()?;
    let (scheme, mut addr) = match console.listener {
        ConsoleListener::Main => (main_scheme, main),
        ConsoleListener::Metrics => ("http", metrics?),
    };
    if addr.ip().is_unspecified() {
        addr.set_ip(if addr.is_ipv4() { Ipv4Addr::LOCALHOST.into() } else { Ipv6Addr::LOCALHOST.into() });
    }
    Some(format!("mcp-runtime console on {scheme}://{addr}{}/", console.path))
}

/// Whether `identity` is an administrator under `config`: a static token's subject listed in
/// `admin_subjects`, or an issued token with every `admin_scopes` scope and `admin_claims`
/// claim (when either is configured).
pub fn is_admin(config: &ConsoleConfig, identity: &Identity) -> bool {
    if identity.issuer.is_none() && config.admin_subjects.iter().any(|s| **s == *identity.subject) {
        return true;
    }
    if config.admin_scopes.is_empty() && config.admin_claims.is_empty() {
        return false;
    }
    let rule = AccessRule { scopes: config.admin_scopes.clone(), claims: config.admin_claims.clone() };
    identity.issuer.is_some() && policy::check(&rule, Some(identity)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConsoleListener;

    fn config(subjects: &[&str], scopes: &[&str]) -> ConsoleConfig {
        ConsoleConfig {
            path: "/console".into(),
            listener: ConsoleListener::Main,
            allow_remote: false,
            admin_subjects: subjects.iter().map(|s| (*s).to_owned()).collect(),
            admin_scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
            admin_claims: Default::default(),
            recent_calls: 10,
            show_arguments: false,
        }
    }

    #[test]
    fn the_start_line_names_the_page_on_its_listener() {
        let main: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let metrics: SocketAddr = "127.0.0.1:9090".parse().unwrap();
        let off = Config::from_toml("[[adapters]]\nkind = \"fixtures\"\nset = \"demo\"\n").unwrap();
        assert_eq!(start_line(&off, "http", main, None), None);
        let mut on = off;
        on.console = Some(config(&["ops"], &[]));
        assert_eq!(
            start_line(&on, "https", main, None).unwrap(),
            "mcp-runtime console on https://127.0.0.1:8080/console/"
        );
        on.console.as_mut().unwrap().listener = ConsoleListener::Metrics;
        assert_eq!(
            start_line(&on, "https", main, Some(metrics)).unwrap(),
            "mcp-runtime console on http://127.0.0.1:9090/console/"
        );
    }

    #[test]
    fn admins_are_listed_subjects_or_tokens_with_the_scopes() {
        let c = config(&["ops"], &["mcp:admin"]);
        assert!(is_admin(&c, &Identity::new("ops")));
        assert!(!is_admin(&c, &Identity::new("alice")));
        let issued = |scopes: &[&str]| {
            Identity::issued("https://as", "ops", scopes.iter().map(|s| (*s).to_owned()).collect(), Default::default())
        };
        assert!(!is_admin(&c, &issued(&["mcp:read"])), "an issued `ops` is not the static subject");
        assert!(is_admin(&c, &issued(&["mcp:read", "mcp:admin"])));
        assert!(!is_admin(&config(&["ops"], &[]), &issued(&[])), "no OAuth rule: no OAuth admin");
    }
}
