//! What an adapter reports about its backends right now, for the operator console: a
//! snapshot taken on demand (never on the request path), empty unless the adapter says more.

use serde::Serialize;

/// One adapter's health and the state of each backend it talks to.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Status {
    /// `None`: the adapter has nothing to say (in-process adapters); `Some(false)`: no
    /// backend can take a call right now.
    pub healthy: Option<bool>,
    /// The backends (REST upstreams, hosted processes, remote servers), in config order.
    pub backends: Vec<Backend>,
    /// Calls running now and the most allowed at once (a CLI adapter's concurrency).
    pub concurrency: Option<(usize, usize)>,
}

/// One backend as the console shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Backend {
    /// Where it is: a base URL, a command line; never a credential.
    pub target: String,
    /// `in_rotation`, `ejected`, `running`, `stopped`, ...
    pub state: &'static str,
    /// Milliseconds (Unix) since the state holds, when known.
    pub since_ms: Option<u64>,
    /// Failures in a row counted against it.
    pub failures: u32,
    /// A hosted process's id.
    pub pid: Option<u32>,
    /// Times a hosted process was started again.
    pub restarts: Option<u32>,
}

impl Backend {
    /// A backend in `state`, nothing else known.
    pub fn new(target: impl Into<String>, state: &'static str) -> Self {
        Self { target: target.into(), state, since_ms: None, failures: 0, pid: None, restarts: None }
    }
}
