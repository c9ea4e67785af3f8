//! `[pinning]`: the definitions that come from outside the configuration (the tools, prompts,
//! resources and templates of `mcp` and `openapi` adapters) pinned by digest in a lock file
//! that `mcp-runtime pin` writes and a pull request reviews. A definition that differs from
//! its pin, or has none, is withheld (`mode = "enforce"`) or served and reported (`"warn"`):
//! a tool description rewritten upstream to instruct the model never reaches agents
//! unreviewed. Checked when the registry is built (at load and on each catalog refresh), never
//! per call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use mcp_adapter_api::Environment;

use super::ConfigError;

/// Adapter kinds whose definitions come from outside the configuration.
pub const PINNED_KINDS: [&str; 2] = ["mcp", "openapi"];

/// `[pinning]` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RawPinning {
    /// `"off"` (default), `"warn"` (serve a changed or new definition, log it and count it)
    /// or `"enforce"` (withhold it from every listing and call until it is pinned).
    pub mode: String,
    /// The lock file `mcp-runtime pin` writes (relative: to this config file's folder).
    pub lock_file: Option<String>,
}

impl Default for RawPinning {
    fn default() -> Self {
        Self { mode: "off".into(), lock_file: None }
    }
}

/// What happens to a definition that differs from its pin or has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinMode {
    /// Served and reported.
    Warn,
    /// Withheld and reported.
    Enforce,
}

/// `[pinning]`, validated, with its lock file read.
#[derive(Debug, Clone, PartialEq)]
pub struct Pinning {
    /// `None`: off (`pin` may still write a lock file when `lock_file` is set).
    pub mode: Option<PinMode>,
    /// Where the lock file is.
    pub lock_file: Option<PathBuf>,
    /// Its pins (empty when it does not exist yet).
    pub lock: Arc<Lock>,
    /// Definitions an administrator approved in the console since, by key: the digest
    /// approved. Shared by every configuration this process loads (a reload keeps them).
    pub approved: Approvals,
}

impl Pinning {
    /// Off, without a lock file.
    pub fn off() -> Self {
        Self { mode: None, lock_file: None, lock: Arc::default(), approved: Approvals::default() }
    }

    /// Whether `sha256` is the pinned or an approved digest of the item at `key`.
    pub fn admits(&self, key: &str, sha256: &str) -> bool {
        self.lock.items.get(key).is_some_and(|p| p.sha256 == sha256)
            || self.approved.get(key).as_deref() == Some(sha256)
    }
}

/// Console approvals of definitions: key → approved digest. With `[redis]` every replica
/// holds the cluster's (kept in a Redis hash and read back every few seconds); without, this
/// replica's alone.
#[derive(Debug, Clone, Default)]
pub struct Approvals(Arc<std::sync::RwLock<BTreeMap<String, String>>>);

impl PartialEq for Approvals {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Approvals {
    /// The digest approved for `key`.
    pub fn get(&self, key: &str) -> Option<String> {
        self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(key).cloned()
    }

    /// Approves `sha256` for `key`.
    pub fn insert(&self, key: String, sha256: String) {
        self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, sha256);
    }

    /// Replaces every approval with `all`; whether anything changed.
    pub fn replace(&self, all: BTreeMap<String, String>) -> bool {
        let mut held = self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = *held != all;
        *held = all;
        changed
    }
}

/// The lock file: each pinned definition by its key (`tool team/search_issues`), with its
/// digest and the definition itself (so a change can be shown beside what was approved).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The format's version (1).
    pub version: u32,
    /// The pins, by key.
    pub items: BTreeMap<String, Pin>,
}

/// One pinned definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// `sha256:<hex>` of the definition's JSON.
    pub sha256: String,
    /// The definition as approved.
    pub definition: Value,
}

impl Lock {
    /// The key of an item: its kind (`tool`, `prompt`, `resource`, `template`), its adapter
    /// and its name (or URI).
    pub fn key(kind: &str, adapter: &str, name: &str) -> String {
        format!("{kind} {adapter}/{name}")
    }

    /// Reads `path`; an absent file is an empty lock (nothing pinned yet).
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self { version: 1, ..Self::default() }),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let lock: Self = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a lock file `mcp-runtime pin` wrote: {e}", path.display()))?;
        if lock.version != 1 {
            return Err(format!("{}: version {} is not one this runtime reads (1)", path.display(), lock.version));
        }
        Ok(lock)
    }
}

/// Validates `[pinning]` and reads its lock file (a relative path starts at the config
/// file's folder).
pub(super) fn pinning(raw: &RawPinning, env: &Environment) -> Result<Pinning, ConfigError> {
    let mode = match raw.mode.as_str() {
        "off" => None,
        "warn" => Some(PinMode::Warn),
        "enforce" => Some(PinMode::Enforce),
        other => {
            return Err(ConfigError::invalid(
                "pinning.mode",
                format!(
                    "unknown mode '{other}': use \"off\", \"warn\" (serve and report) or \"enforce\" (withhold until pinned)"
                ),
            ));
        }
    };
    let lock_file = raw.lock_file.as_ref().map(|p| env.path(p));
    if mode.is_some() && lock_file.is_none() {
        return Err(ConfigError::invalid(
            "pinning.lock_file",
            "set the lock file's path (e.g. \"mcp-runtime.lock\"); `mcp-runtime pin` writes it",
        ));
    }
    let lock = match &lock_file {
        Some(path) => Lock::read(path).map_err(|e| ConfigError::invalid("pinning.lock_file", e))?,
        None => Lock::default(),
    };
    Ok(Pinning { mode, lock_file, lock: Arc::new(lock), approved: Approvals::default() })
}
