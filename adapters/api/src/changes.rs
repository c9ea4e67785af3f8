//! Change announcements: how adapters tell the runtime that lists or resources changed, so
//! open `subscriptions/listen` streams hear about it (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen).

use std::sync::Arc;

/// One change.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Change {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A resource's content changed.
    ResourceUpdated(String),
}

/// A handle adapters keep to publish changes. Cheap to clone.
#[derive(Clone)]
pub struct Changes(Arc<dyn Fn(Change) + Send + Sync>);

impl Changes {
    /// Publishes through `f`.
    pub fn new(f: impl Fn(Change) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// A sink that drops every change (tests, tools that never change).
    pub fn discard() -> Self {
        Self::new(|_| {})
    }

    /// Announces a change to every listener on every replica.
    pub fn publish(&self, change: Change) {
        (self.0)(change);
    }
}

impl Default for Changes {
    /// [`Changes::discard`].
    fn default() -> Self {
        Self::discard()
    }
}

/// A handle an adapter whose catalog changes at run time keeps (an MCP upstream whose lists
/// changed): the runtime then reads every adapter's [`crate::Adapter::catalog`] again, rebuilds
/// its registry off the request path, swaps it in and announces the lists that differ
/// through [`Changes`] itself. Cheap to clone.
#[derive(Clone)]
pub struct CatalogChanged(Arc<dyn Fn() + Send + Sync>);

impl CatalogChanged {
    /// Signals through `f`.
    pub fn new(f: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Tells the runtime to read the catalogs again.
    pub fn signal(&self) {
        (self.0)();
    }
}

impl Default for CatalogChanged {
    /// A signal nobody hears (tests, tools).
    fn default() -> Self {
        Self::new(|| {})
    }
}

impl std::fmt::Debug for CatalogChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CatalogChanged")
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Changes")
    }
}
