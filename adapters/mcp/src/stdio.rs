//! Hosted stdio servers: a small pool of child processes per replica, each started with the
//! CLI adapter's hygiene (`mcp_adapter_cli::process::Service`: no shell, empty environment
//! plus an allow-list, its own process group under a supervisor), spoken to as newline-
//! delimited JSON-RPC (MCP 2026-07-28 basic/transports/stdio), restarted with backoff when it
//! dies or stops answering `ping`, its stderr forwarded to the log.
//!
//! - `life`: starting, handshaking, watching and restarting one server.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use mcp_adapter_api::CancellationToken;
use mcp_adapter_api::protocol::ErrorObject;
use mcp_adapter_cli::config::RunLimits;
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use crate::config::{Protocol, RestartConfig};
use crate::exchange::{Flight, UpstreamError};
use crate::wire::{self, Dialect, Incoming};

mod life;

/// What to start, resolved at build time.
#[derive(Debug)]
pub struct Program {
    /// Absolute path of the program.
    pub path: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory.
    pub working_dir: Option<PathBuf>,
    /// Limits of its process tree.
    pub limits: RunLimits,
}

/// Sees an upstream notification: method, params.
pub type OnNotice = Box<dyn Fn(&str, &Value) + Send + Sync>;

/// Shared by the pool and its supervising tasks.
pub struct Settings {
    /// The adapter's name (logs).
    pub name: String,
    /// What to start.
    pub program: Program,
    /// Which revision to speak.
    pub protocol: Protocol,
    /// Deadline of the handshake and of `ping`.
    pub request_timeout: Duration,
    /// How often to `ping` (`None`: never).
    pub health_interval: Option<Duration>,
    /// Restart backoff.
    pub restart: RestartConfig,
    /// Longest line accepted from the server.
    pub max_message_bytes: usize,
    /// Sees notifications not tied to a request (list changes, resource updates).
    pub on_notice: OnNotice,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings").field("name", &self.name).field("program", &self.program).finish_non_exhaustive()
    }
}

/// The pool of one adapter.
#[derive(Debug)]
pub struct Stdio {
    slots: Arc<[ArcSwapOption<Conn>]>,
    ready: Arc<Notify>,
    /// Times each slot's server was started again after it stopped.
    restarts: Arc<[AtomicU32]>,
}

impl Stdio {
    /// Starts `processes` supervisors (each starts and restarts one server) until `stop`.
    pub fn start(settings: Settings, processes: usize, stop: CancellationToken) -> Self {
        let slots: Arc<[ArcSwapOption<Conn>]> = (0..processes).map(|_| ArcSwapOption::empty()).collect();
        let restarts: Arc<[AtomicU32]> = (0..processes).map(|_| AtomicU32::new(0)).collect();
        let ready = Arc::new(Notify::new());
        let settings = Arc::new(settings);
        for i in 0..processes {
            let (slots, restarts, ready, settings, stop) =
                (Arc::clone(&slots), Arc::clone(&restarts), Arc::clone(&ready), Arc::clone(&settings), stop.clone());
            tokio::spawn(async move { life::supervise(i, &slots[i], &restarts[i], &ready, &settings, &stop).await });
        }
        Self { slots, ready, restarts }
    }

    /// The least busy live server, waiting for one until `deadline`.
    pub async fn conn(&self, deadline: Instant) -> Result<Arc<Conn>, UpstreamError> {
        loop {
            let notified = self.ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let best = self
                .slots
                .iter()
                .filter_map(ArcSwapOption::load_full)
                .filter(|c| !c.closed.is_cancelled())
                .min_by_key(|c| c.in_flight.load(Ordering::Relaxed));
            if let Some(c) = best {
                return Ok(c);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(UpstreamError::Unreachable("no server process is running (it is being restarted)".into()));
            }
        }
    }

    /// Each server process as the operator console shows it: running (pid) or being
    /// restarted, and how many times it was restarted.
    pub fn status(&self, command: &str) -> Vec<mcp_adapter_api::Backend> {
        self.slots
            .iter()
            .zip(self.restarts.iter())
            .map(|(slot, restarts)| {
                let conn = slot.load_full().filter(|c| !c.closed.is_cancelled());
                let mut b =
                    mcp_adapter_api::Backend::new(command, if conn.is_some() { "running" } else { "restarting" });
                b.pid = conn.and_then(|c| c.pid);
                b.restarts = Some(restarts.load(Ordering::Relaxed));
                b
            })
            .collect()
    }

    /// Pids of the processes started (the supervisors, when there are): for tests and logs.
    pub fn pids(&self) -> Vec<u32> {
        self.slots.iter().filter_map(|s| s.load_full()?.pid).collect()
    }
}

/// One live server process.
pub struct Conn {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Mutex<HashMap<u64, mpsc::UnboundedSender<Incoming>>>,
    next_id: AtomicU64,
    in_flight: AtomicUsize,
    closed: CancellationToken,
    /// What the handshake found.
    peer: arc_swap::ArcSwap<Peer>,
    pid: Option<u32>,
}

/// The revision a server speaks and its capabilities.
#[derive(Debug)]
pub struct Peer {
    /// The revision.
    pub dialect: Dialect,
    /// Its capabilities.
    pub capabilities: Value,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn").field("pid", &self.pid).field("peer", &self.peer).finish_non_exhaustive()
    }
}

impl Conn {
    /// What the handshake found.
    pub fn peer(&self) -> Arc<Peer> {
        self.peer.load_full()
    }

    /// Starts a request: `params` get the envelope of the server's dialect.
    pub fn start(
        self: &Arc<Self>,
        method: &str,
        params: Map<String, Value>,
        capabilities: &Value,
        progress: bool,
    ) -> Result<Flight, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let token = progress.then(|| json!(id));
        let params = wire::params(&self.peer.load().dialect, params, capabilities, token.as_ref());
        let (tx, rx) = mpsc::unbounded_channel();
        self.pending.lock().expect("pending").insert(id, tx);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let flight = StdioFlight { rx, conn: Arc::clone(self), id, done: false };
        self.send(&wire::request(id, method, params))?;
        Ok(Flight::Stdio(flight))
    }

    fn send(&self, message: &Value) -> Result<(), UpstreamError> {
        let mut line = serde_json::to_vec(message).expect("serializable");
        line.push(b'\n');
        self.out.send(line).map_err(|_| UpstreamError::Failed("the server process is gone".into()))
    }

    /// Routes one line from the server.
    fn route(&self, message: Incoming, settings: &Settings) {
        match message {
            Incoming::Response { ref id, .. } => {
                let tx = id.as_u64().and_then(|id| self.pending.lock().expect("pending").remove(&id));
                if let Some(tx) = tx {
                    let _ = tx.send(message);
                }
            }
            Incoming::Notification { ref method, ref params } => {
                let token =
                    params.get("_meta").and_then(|m| m.get("progressToken")).or_else(|| params.get("progressToken"));
                match token.and_then(Value::as_u64) {
                    Some(id) if method == "notifications/progress" => {
                        if let Some(tx) = self.pending.lock().expect("pending").get(&id) {
                            let _ = tx.send(message);
                        }
                    }
                    _ => (settings.on_notice)(method, params),
                }
            }
            Incoming::Request { ref id, ref method, .. } => {
                match method.as_str() {
                    "ping" => {
                        let _ = self.send(&wire::response(id, Ok(json!({}))));
                        return;
                    }
                    // One process serves every caller, and servers keep roots for the whole
                    // connection (many ask right after the handshake, and widen what they
                    // serve to the answer): one caller's roots must not become everyone's,
                    // so it gets none, whenever it asks.
                    "roots/list" => {
                        let _ = self.send(&wire::response(id, Ok(wire::no_roots())));
                        return;
                    }
                    _ => {}
                }
                // stdio carries no link from a server request to the call it belongs to: it is
                // relayed only when exactly one call is in flight on this process.
                let pending = self.pending.lock().expect("pending");
                let answer = match (pending.len(), pending.values().next()) {
                    (1, Some(tx)) => {
                        let _ = tx.send(message.clone());
                        return;
                    }
                    (0, _) => Err(ErrorObject {
                        code: -32603,
                        message: format!("{method} cannot be relayed outside a call"),
                        data: None,
                    }),
                    _ => Err(ErrorObject {
                        code: -32603,
                        message: format!(
                            "{method} cannot be relayed: several calls are running on this server process"
                        ),
                        data: None,
                    }),
                };
                drop(pending);
                let _ = self.send(&wire::response(id, answer));
            }
        }
    }
}

/// A request in flight on one process.
#[derive(Debug)]
pub struct StdioFlight {
    rx: mpsc::UnboundedReceiver<Incoming>,
    conn: Arc<Conn>,
    id: u64,
    done: bool,
}

impl StdioFlight {
    /// The next message for this request; `None` when the process died.
    pub async fn next(&mut self) -> Result<Option<Incoming>, UpstreamError> {
        let message = tokio::select! {
            m = self.rx.recv() => m,
            () = self.conn.closed.cancelled() => None,
        };
        if matches!(message, Some(Incoming::Response { .. })) {
            self.done = true;
        }
        match message {
            Some(m) => Ok(Some(m)),
            None => Err(UpstreamError::Failed("the server process exited during the call".into())),
        }
    }

    /// Answers a request of the server.
    pub async fn respond(&mut self, id: &Value, outcome: Result<Value, ErrorObject>) -> Result<(), UpstreamError> {
        self.conn.send(&wire::response(id, outcome))
    }
}

impl Drop for StdioFlight {
    fn drop(&mut self) {
        self.conn.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.done {
            self.conn.pending.lock().expect("pending").remove(&self.id);
            // MCP 2026-07-28 basic/patterns/cancellation: the server may stop the work.
            let _ = self.conn.send(&wire::notification(
                "notifications/cancelled",
                json!({"requestId": self.id, "reason": "the caller went away"}),
            ));
        }
    }
}
