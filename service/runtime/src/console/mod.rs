//! The operator console's data: what the browser pages show, built from the replica's state
//! on demand (never on the request path), and the task that samples the counters for the
//! charts and publishes this replica's heartbeat. The HTTP side (routes, the admin check,
//! assets) is `http::console`; none of this exists unless `[console]` is enabled.
//!
//! - [`views`]: the JSON of each page (overview, catalog, adapters, calls, redacted config).
//! - [`sample`]: the sampling and heartbeat task.

pub mod sample;
pub mod views;

use mcp_adapter_api::Identity;

use crate::auth::policy;
use crate::config::{AccessRule, ConsoleConfig};

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
