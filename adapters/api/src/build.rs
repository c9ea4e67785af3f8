//! The build side of the contract: how an adapter kind becomes an instance from its config
//! section and a [`BuildContext`] (what the load may see of the world, the change sink), and
//! how it reports configuration problems ([`Problems`], keys below the adapter).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Adapter, CatalogChanged, Changes, Observe, Problems};

/// An adapter kind that can be built from configuration. The runtime keeps a closed list of
/// kinds (`kind = "cli" | "rest" | "fixtures"`) and calls [`Build::build`] once per load;
/// the instance is then shared as `Arc<dyn Adapter>`.
pub trait Build: Adapter + Sized {
    /// The kind's config section as written (`[[adapters]]` minus `name` and `kind`).
    type Config;

    /// Validates `config` and builds the instance, reporting every problem found (not the
    /// first). Problems name the key below the adapter (`tools.grep.executable`); the runtime
    /// prefixes `adapters.<name>.`.
    ///
    /// With [`Environment::is_offline`] (`mcp-runtime check --offline`), everything the file
    /// alone shows is checked (keys, values, schemas, templates) and nothing outside it is
    /// touched: no secret is read, no executable looked up, no network reached. An adapter
    /// that cannot exist without those still returns an instance (it is never served).
    fn build(config: &Self::Config, cx: &BuildContext) -> Result<Self, Problems>;
}

/// What the runtime hands an adapter at build time.
#[derive(Debug, Clone, Default)]
pub struct BuildContext {
    /// The adapter's instance name (`[[adapters]] name`), for its log lines and messages.
    pub name: String,
    /// The environment the configuration was loaded with (never the live process
    /// environment: builds are reproducible and tests need not touch `std::env`).
    pub env: Environment,
    /// Where the adapter announces list and resource changes.
    pub changes: Changes,
    /// Where an adapter whose catalog changes at run time asks for the registry to be rebuilt.
    pub catalog_changed: CatalogChanged,
    /// Where the adapter reports what it observes of its backends (this adapter's scope).
    pub observe: Observe,
    /// The `[[upstream_auth]]` this adapter's calls take each caller's own token from
    /// (`user_auth`): [`crate::CallContext::user_token`] is then set on every call, and the
    /// adapter must leave `Authorization` to it.
    pub user_auth: Option<String>,
}

impl BuildContext {
    /// A context with `env` and a change sink that drops everything (tests, tools).
    pub fn with_env(env: Environment) -> Self {
        Self {
            name: String::new(),
            env,
            changes: Changes::discard(),
            catalog_changed: CatalogChanged::default(),
            observe: Observe::default(),
            user_auth: None,
        }
    }
}

/// What a configuration load may see of the world, cheap to clone: a snapshot of the
/// environment variables, the folder relative paths in the file start from (the config
/// file's own), and whether to look outside the file at all. `Debug` lists variable names,
/// never values (they may be credentials).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: Arc<BTreeMap<String, String>>,
    base_dir: Option<Arc<Path>>,
    offline: bool,
}

impl Environment {
    /// The value of `name`, if set (never, offline).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The same, with relative paths starting at `dir` (the config file's folder).
    #[must_use]
    pub fn with_base_dir(self, dir: impl Into<PathBuf>) -> Self {
        Self { base_dir: Some(Arc::from(dir.into())), ..self }
    }

    /// The same, offline: no variable, and nothing outside the file is to be touched.
    #[must_use]
    pub fn offline(self) -> Self {
        Self { vars: Arc::default(), offline: true, ..self }
    }

    /// Whether this is an offline check ([`Build::build`] says what that skips).
    pub fn is_offline(&self) -> bool {
        self.offline
    }

    /// `path` as the file means it: a relative path starts at the config file's folder
    /// (the working directory for a config that is not a file).
    pub fn path(&self, path: impl AsRef<Path>) -> PathBuf {
        match &self.base_dir {
            Some(dir) if path.as_ref().is_relative() => dir.join(path),
            _ => path.as_ref().to_path_buf(),
        }
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Environment {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let vars = iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        Self { vars: Arc::new(vars), base_dir: None, offline: false }
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("vars", &self.vars.keys().collect::<Vec<_>>())
            .field("base_dir", &self.base_dir)
            .field("offline", &self.offline)
            .finish()
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
    fn relative_paths_start_at_the_base_dir() {
        let env = Environment::default();
        assert_eq!(env.path("a/b"), PathBuf::from("a/b"));
        let env = env.with_base_dir("/etc/mcp");
        assert_eq!(env.path("a/b"), PathBuf::from("/etc/mcp/a/b"));
        assert_eq!(env.path("/abs"), PathBuf::from("/abs"));
        let env: Environment = [("PATH", "/bin")].into_iter().collect();
        assert_eq!(env.clone().offline().get("PATH"), None);
        assert!(env.offline().is_offline());
    }
}
