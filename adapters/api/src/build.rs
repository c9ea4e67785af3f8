//! The build side of the contract: how an adapter kind becomes an instance from its config
//! section and a [`BuildContext`] (the environment snapshot, the change sink), and how it
//! reports a configuration problem ([`ConfigProblem`], a key below the adapter).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{Adapter, CatalogChanged, Changes, Observe};

/// An adapter kind that can be built from configuration. The runtime keeps a closed list of
/// kinds (`kind = "cli" | "rest" | "fixtures"`) and calls [`Build::build`] once per load;
/// the instance is then shared as `Arc<dyn Adapter>`.
pub trait Build: Adapter + Sized {
    /// The kind's config section as written (`[[adapters]]` minus `name` and `kind`).
    type Config;

    /// Validates `config` and builds the instance. Problems name the key below the adapter
    /// (`tools.grep.executable`); the runtime prefixes `adapters.<name>.`.
    fn build(config: &Self::Config, cx: &BuildContext) -> Result<Self, ConfigProblem>;
}

/// What the runtime hands an adapter at build time.
#[derive(Debug, Clone, Default)]
pub struct BuildContext {
    /// The environment the configuration was loaded with (never the live process
    /// environment: builds are reproducible and tests need not touch `std::env`).
    pub env: Environment,
    /// Where the adapter announces list and resource changes.
    pub changes: Changes,
    /// Where an adapter whose catalog changes at run time asks for the registry to be rebuilt.
    pub catalog_changed: CatalogChanged,
    /// Where the adapter reports what it observes of its backends (this adapter's scope).
    pub observe: Observe,
}

impl BuildContext {
    /// A context with `env` and a change sink that drops everything (tests, tools).
    pub fn with_env(env: Environment) -> Self {
        Self {
            env,
            changes: Changes::discard(),
            catalog_changed: CatalogChanged::default(),
            observe: Observe::default(),
        }
    }
}

/// A snapshot of environment variables, cheap to clone. `Debug` lists names, never values
/// (they may be credentials).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment(Arc<BTreeMap<String, String>>);

impl Environment {
    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Environment {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(Arc::new(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect()))
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Environment").field(&self.0.keys().collect::<Vec<_>>()).finish()
    }
}

/// A configuration problem: a dotted key relative to where it was found (the adapter's
/// section, e.g. `tools.get_user.path`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct ConfigProblem {
    /// Dotted key, relative to the section being validated.
    pub key: String,
    /// What is wrong and how to fix it.
    pub problem: String,
}

impl ConfigProblem {
    /// A problem at `key`.
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { key: key.into(), problem: problem.into() }
    }

    /// The same problem with its key below `prefix` (`tools.t` + `path` → `tools.t.path`).
    pub fn under(self, prefix: &str) -> Self {
        let key = if self.key.is_empty() { prefix.to_owned() } else { format!("{prefix}.{}", self.key) };
        Self { key, problem: self.problem }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_never_prints_values() {
        let env: Environment = [("TOKEN", "s3cr3t"), ("PATH", "/bin")].into_iter().collect();
        assert_eq!(env.get("TOKEN"), Some("s3cr3t"));
        assert_eq!(env.get("NOPE"), None);
        let shown = format!("{:?}", BuildContext::with_env(env));
        assert!(shown.contains("TOKEN") && !shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn problems_nest_under_a_prefix() {
        let p = ConfigProblem::new("path", "bad").under("tools.t");
        assert_eq!(p.to_string(), "tools.t.path: bad");
        assert_eq!(ConfigProblem::new("", "bad").under("auth").key, "auth");
    }
}
