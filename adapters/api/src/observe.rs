//! The observation seam: what an adapter tells the runtime about its backends (an upstream
//! left or rejoined the rotation, a request was retried, a program exited), so the runtime can
//! count it without adapters depending on it.
//!
//! An adapter asks its [`Observer`] for one handle per upstream or tool at build time and keeps
//! it; an event is then one virtual call on that handle (the runtime's is an atomic add): no
//! lookup, no allocation per call. The default observer ignores everything, so tests, benches
//! and other hosts need not care.

use std::sync::Arc;
use std::time::Duration;

/// Hands out per-upstream and per-tool handles; scoped to one adapter instance (the runtime
/// gives each `[[adapters]]` entry its own, carrying its name).
pub trait Observer: Send + Sync + 'static {
    /// The handle for the upstream `upstream` (a base URL as configured, without a trailing `/`).
    fn upstream(&self, upstream: &str) -> Arc<dyn UpstreamEvents>;

    /// The handle for the exits of the programs that tool `tool` runs.
    fn exits(&self, tool: &str) -> Arc<dyn ExitEvents>;
}

/// Events of one upstream of a pool.
pub trait UpstreamEvents: Send + Sync + std::fmt::Debug + 'static {
    /// The upstream left the rotation for `period` from now. `renewed`: it was already out and
    /// the period starts over (a further failure while out), not a new ejection.
    fn ejected(&self, period: Duration, renewed: bool);

    /// The upstream is back in the rotation before its period ended (a success, a health check).
    fn restored(&self);

    /// A request that failed on this upstream is being retried (elsewhere when there is a choice).
    fn retried(&self);
}

/// How a program a tool ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exit {
    /// It exited with this status (Unix: 0 to 255).
    Code(i32),
    /// A signal ended it (someone else killed it, or it crashed).
    Signal,
    /// The call's deadline passed and the runtime killed it.
    Timeout,
}

/// Exits of the programs one tool runs.
pub trait ExitEvents: Send + Sync + std::fmt::Debug + 'static {
    /// One run ended.
    fn exited(&self, exit: Exit);
}

/// An [`Observer`] behind an `Arc`, cheap to clone; the default ignores everything.
#[derive(Clone)]
pub struct Observe(Arc<dyn Observer>);

impl Observe {
    /// Wraps an observer.
    pub fn new(observer: Arc<dyn Observer>) -> Self {
        Self(observer)
    }

    /// See [`Observer::upstream`].
    pub fn upstream(&self, upstream: &str) -> Arc<dyn UpstreamEvents> {
        self.0.upstream(upstream)
    }

    /// See [`Observer::exits`].
    pub fn exits(&self, tool: &str) -> Arc<dyn ExitEvents> {
        self.0.exits(tool)
    }
}

impl Default for Observe {
    fn default() -> Self {
        Self(Arc::new(Ignore))
    }
}

impl std::fmt::Debug for Observe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observe")
    }
}

/// The observer and handles that drop every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ignore;

impl Observer for Ignore {
    fn upstream(&self, _: &str) -> Arc<dyn UpstreamEvents> {
        Arc::new(Self)
    }

    fn exits(&self, _: &str) -> Arc<dyn ExitEvents> {
        Arc::new(Self)
    }
}

impl UpstreamEvents for Ignore {
    fn ejected(&self, _: Duration, _: bool) {}
    fn restored(&self) {}
    fn retried(&self) {}
}

impl ExitEvents for Ignore {
    fn exited(&self, _: Exit) {}
}
