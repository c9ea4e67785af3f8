//! Hosted stdio servers: a small pool of child processes per replica, each started with the
//! CLI adapter's hygiene (`mcp_adapter_cli::process::Service`: no shell, empty environment
//! plus an allow-list, its own process group under a supervisor), spoken to as newline-
//! delimited JSON-RPC (MCP 2026-07-28 basic/transports/stdio), restarted with backoff when it
//! dies or stops answering `ping`, its stderr forwarded to the log.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use backon::BackoffBuilder as _;
use mcp_adapter_api::CancellationToken;
use mcp_adapter_api::protocol::{ErrorObject, version};
use mcp_adapter_cli::config::RunLimits;
use mcp_adapter_cli::process::{Invocation, Service};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use crate::config::{Protocol, RestartConfig};
use crate::exchange::{Flight, UpstreamError, drive_quiet};
use crate::wire::{self, Dialect, Incoming};

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
}

impl Stdio {
    /// Starts `processes` supervisors (each starts and restarts one server) until `stop`.
    pub fn start(settings: Settings, processes: usize, stop: CancellationToken) -> Self {
        let slots: Arc<[ArcSwapOption<Conn>]> = (0..processes).map(|_| ArcSwapOption::empty()).collect();
        let ready = Arc::new(Notify::new());
        let settings = Arc::new(settings);
        for i in 0..processes {
            let (slots, ready, settings, stop) =
                (Arc::clone(&slots), Arc::clone(&ready), Arc::clone(&settings), stop.clone());
            tokio::spawn(async move { supervise(i, &slots[i], &ready, &settings, &stop).await });
        }
        Self { slots, ready }
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
                if method == "ping" {
                    let _ = self.send(&wire::response(id, Ok(json!({}))));
                    return;
                }
                // stdio carries no link from a server request to the call it belongs to: it is
                // relayed only when exactly one call is in flight on this process.
                let pending = self.pending.lock().expect("pending");
                let answer = match (pending.len(), pending.values().next()) {
                    (1, Some(tx)) => {
                        let _ = tx.send(message.clone());
                        return;
                    }
                    // Asked outside any call (servers ask for roots after the handshake): no
                    // caller to ask, so no roots.
                    (0, _) if method == "roots/list" => Ok(json!({"roots": []})),
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

/// Starts, watches and restarts the server of one slot until `stop`.
async fn supervise(
    index: usize,
    slot: &ArcSwapOption<Conn>,
    ready: &Notify,
    settings: &Settings,
    stop: &CancellationToken,
) {
    let backoff = || {
        backon::ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(settings.restart.initial_backoff_ms))
            .with_max_delay(Duration::from_millis(settings.restart.max_backoff_ms))
            .with_jitter()
            .without_max_times()
            .build()
    };
    let mut delays = backoff();
    while !stop.is_cancelled() {
        let started = Instant::now();
        match run_once(index, slot, ready, settings, stop).await {
            Ok(()) => return,
            Err(why) => {
                tracing::warn!(adapter = %settings.name, process = index, error = %why, "hosted MCP server stopped; restarting");
            }
        }
        slot.store(None);
        // A server that ran a while before dying starts over from the shortest wait.
        if started.elapsed() > Duration::from_secs(30) {
            delays = backoff();
        }
        let wait = delays.next().unwrap_or(Duration::from_millis(settings.restart.max_backoff_ms));
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One life of a server: start, handshake, serve until it dies, fails `ping` or `stop` fires
/// (`Ok`). The process tree is killed when this returns (the `Service` is dropped).
async fn run_once(
    index: usize,
    slot: &ArcSwapOption<Conn>,
    ready: &Notify,
    settings: &Settings,
    stop: &CancellationToken,
) -> Result<(), String> {
    let p = &settings.program;
    let inv = Invocation {
        program: &p.path,
        args: &p.args,
        env: &p.env,
        working_dir: p.working_dir.as_deref(),
        stdin: None,
        max_output_bytes: 0,
        limits: p.limits,
    };
    let (mut service, pipes) = Service::start(&inv).map_err(|e| format!("cannot start {}: {e}", p.path.display()))?;
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let closed = CancellationToken::new();
    // Everything below belongs to this life: the tasks end with `closed`.
    let _end = closed.clone().drop_guard();
    let mut stdin = pipes.stdin;
    let writer_closed = closed.clone();
    tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                l = out_rx.recv() => l,
                () = writer_closed.cancelled() => None,
            };
            let Some(line) = line else { return };
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                return;
            }
        }
    });
    let name = settings.name.clone();
    let mut stderr = BufReader::new(pipes.stderr).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            tracing::info!(adapter = %name, process = index, stream = "stderr", "{line}");
        }
    });

    let dialect = match settings.protocol {
        Protocol::Legacy => Dialect::Legacy(wire::LEGACY_VERSION.into()),
        _ => Dialect::Modern,
    };
    let conn = Arc::new(Conn {
        out: out_tx,
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        in_flight: AtomicUsize::new(0),
        closed: closed.clone(),
        peer: arc_swap::ArcSwap::from_pointee(Peer { dialect, capabilities: Value::Null }),
        pid: service.id(),
    });
    let reader = read_loop(pipes.stdout, Arc::clone(&conn), settings);
    tokio::pin!(reader);

    let life = async {
        let deadline = Instant::now() + settings.request_timeout;
        tokio::select! {
            c = handshake(&conn, settings, deadline) => c?,
            r = &mut reader => return Err(r),
        };
        let peer = conn.peer();
        tracing::info!(adapter = %settings.name, process = index, pid = ?conn.pid, protocol = peer.dialect.version(), "hosted MCP server ready");
        slot.store(Some(Arc::clone(&conn)));
        ready.notify_waiters();
        tokio::select! {
            r = &mut reader => Err(r),
            why = health(&conn, settings) => Err(why),
        }
    };
    let outcome = tokio::select! {
        r = life => r,
        status = service.wait() => Err(match status {
            Ok(s) => format!("it exited ({s})"),
            Err(e) => format!("waiting for it failed: {e}"),
        }),
        () = stop.cancelled() => Ok(()),
    };
    slot.store(None);
    closed.cancel();
    outcome
}

/// Finds the dialect: `server/discover` first (unless told), `initialize` on refusal.
async fn handshake(conn: &Arc<Conn>, settings: &Settings, deadline: Instant) -> Result<(), String> {
    let never = CancellationToken::new();
    if settings.protocol != Protocol::Legacy {
        let flight = conn.start("server/discover", Map::new(), &json!({}), false).map_err(|e| e.to_string())?;
        match drive_quiet(flight, deadline, &never).await {
            Ok(r) if r["supportedVersions"].as_array().is_some_and(|v| v.iter().any(|v| v == version::LATEST)) => {
                conn.peer.store(Arc::new(Peer { dialect: Dialect::Modern, capabilities: r["capabilities"].clone() }));
                return Ok(());
            }
            Ok(_) | Err(UpstreamError::Rpc(_)) if settings.protocol == Protocol::Auto => {}
            Ok(_) => return Err(format!("it does not list {} in supportedVersions", version::LATEST)),
            Err(e) => return Err(format!("server/discover: {e}")),
        }
    }
    conn.peer
        .store(Arc::new(Peer { dialect: Dialect::Legacy(wire::LEGACY_VERSION.into()), capabilities: Value::Null }));
    let mut params = Map::new();
    params.insert("protocolVersion".into(), json!(wire::LEGACY_VERSION));
    params.insert("capabilities".into(), wire::legacy_capabilities());
    params.insert("clientInfo".into(), wire::client_info());
    let flight = conn.start("initialize", params, &json!({}), false).map_err(|e| e.to_string())?;
    let result = drive_quiet(flight, deadline, &never).await.map_err(|e| format!("initialize: {e}"))?;
    conn.send(&wire::notification("notifications/initialized", Value::Null)).map_err(|e| e.to_string())?;
    let negotiated = result["protocolVersion"].as_str().unwrap_or(wire::LEGACY_VERSION).to_owned();
    conn.peer
        .store(Arc::new(Peer { dialect: Dialect::Legacy(negotiated), capabilities: result["capabilities"].clone() }));
    Ok(())
}

/// Reads the server's stdout until it closes; returns why it ended.
async fn read_loop(stdout: tokio::process::ChildStdout, conn: Arc<Conn>, settings: &Settings) -> String {
    let mut lines = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) => return "it closed its stdout".into(),
            Ok(_) if line.len() > settings.max_message_bytes => {
                return format!("it wrote a message longer than {} bytes", settings.max_message_bytes);
            }
            Ok(_) => {}
            Err(e) => return format!("reading its stdout failed: {e}"),
        }
        let Some(message) = serde_json::from_slice(&line).ok().and_then(Incoming::parse) else {
            tracing::debug!(adapter = %settings.name, "skipping a stdout line that is not a JSON-RPC message");
            continue;
        };
        conn.route(message, settings);
    }
}

/// `ping` every interval; returns when one goes unanswered.
async fn health(conn: &Arc<Conn>, settings: &Settings) -> String {
    let Some(every) = settings.health_interval else { return std::future::pending().await };
    let never = CancellationToken::new();
    loop {
        tokio::time::sleep(every).await;
        let deadline = Instant::now() + settings.request_timeout;
        let ping = match conn.start("ping", Map::new(), &json!({}), false) {
            Ok(f) => drive_quiet(f, deadline, &never).await,
            Err(e) => Err(e),
        };
        if let Err(e) = ping {
            return format!("ping failed: {e}");
        }
    }
}
