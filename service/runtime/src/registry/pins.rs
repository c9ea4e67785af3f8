//! Definition pinning (`[pinning]`) as the registry is built: each tool, prompt, resource and
//! template of an `mcp` or `openapi` adapter is compared with its pin in the lock file; one
//! that differs or has none is withheld (`enforce`) or served (`warn`), and reported either
//! way. Runs at load and on every catalog refresh; a call never pays for it.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::NamedAdapter;
use crate::config::pinning::{Lock, PINNED_KINDS, Pin, PinMode, Pinning};

/// A definition that is not the pinned one.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpinned {
    /// Its lock key (`tool team/search_issues`).
    pub key: String,
    /// Its kind (`tool`, `prompt`, `resource`, `template`) and name (or URI).
    pub item: (&'static str, String),
    /// Its adapter.
    pub adapter: Arc<str>,
    /// The definition as pinned; `None`: a new item.
    pub pinned: Option<Value>,
    /// The definition as the adapter has it now.
    pub current: Value,
    /// Withheld from listings and calls (`enforce`), or served (`warn`).
    pub withheld: bool,
}

/// An item's definition as pinned: its JSON, without `_meta` (metadata an upstream may vary
/// from one listing to the next).
pub fn definition<T: Serialize>(item: &T) -> Value {
    let mut v = serde_json::to_value(item).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("_meta");
    }
    v
}

/// `sha256:<hex>` of a definition's JSON (serde_json writes object keys sorted).
pub fn digest(definition: &Value) -> String {
    let bytes = serde_json::to_vec(definition).unwrap_or_default();
    let d = ring::digest::digest(&ring::digest::SHA256, &bytes);
    let hex: String = d.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Checks the items of one registry build against the lock.
pub(super) struct Checker<'a> {
    pinning: &'a Pinning,
    /// What did not match, in catalog order.
    pub(super) found: Vec<Unpinned>,
}

impl<'a> Checker<'a> {
    pub(super) fn new(pinning: &'a Pinning) -> Self {
        Self { pinning, found: Vec::new() }
    }

    /// Whether `item` (of `kind`, named `name`, from `adapter`) may be served; a definition
    /// that is not the pinned one is recorded.
    pub(super) fn admit<T: Serialize>(
        &mut self,
        adapter: &NamedAdapter,
        kind: &'static str,
        name: &str,
        item: &T,
    ) -> bool {
        let Some(mode) = self.pinning.mode else { return true };
        if !PINNED_KINDS.contains(&adapter.kind) {
            return true;
        }
        let current = definition(item);
        let key = Lock::key(kind, &adapter.name, name);
        if self.pinning.admits(&key, &digest(&current)) {
            return true;
        }
        let pin = self.pinning.lock.items.get(&key);
        let withheld = mode == PinMode::Enforce;
        self.found.push(Unpinned {
            key,
            item: (kind, name.to_owned()),
            adapter: Arc::from(adapter.name.as_str()),
            pinned: pin.map(|p| p.definition.clone()),
            current,
            withheld,
        });
        !withheld
    }
}

/// The lock of what `adapters` serve now: every definition of their `mcp` and `openapi`
/// adapters, pinned as it is.
pub fn lock_of(adapters: &[NamedAdapter]) -> Lock {
    let mut lock = Lock { version: 1, ..Lock::default() };
    let mut pin = |adapter: &str, kind: &str, name: &str, definition: Value| {
        let sha256 = digest(&definition);
        lock.items.insert(Lock::key(kind, adapter, name), Pin { sha256, definition });
    };
    for a in adapters.iter().filter(|a| PINNED_KINDS.contains(&a.kind)) {
        let catalog = a.adapter.catalog();
        for t in &catalog.tools {
            pin(&a.name, "tool", &t.tool.name, definition(&t.tool));
        }
        for p in &catalog.prompts {
            pin(&a.name, "prompt", &p.name, definition(p));
        }
        for r in &catalog.resources {
            pin(&a.name, "resource", &r.uri, definition(r));
        }
        for t in &catalog.resource_templates {
            pin(&a.name, "template", &t.uri_template, definition(t));
        }
    }
    lock
}
