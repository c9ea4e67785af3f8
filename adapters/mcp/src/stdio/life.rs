//! One hosted server's lives: start it, find its revision (`server/discover`, else
//! `initialize`), route what it writes, `ping` it, and start it again with backoff when it
//! exits or stops answering.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use backon::BackoffBuilder as _;
use mcp_adapter_api::CancellationToken;
use mcp_adapter_api::protocol::version;
use mcp_adapter_cli::process::{Invocation, Service};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use super::{Conn, Peer, Settings};
use crate::config::Protocol;
use crate::exchange::{UpstreamError, drive_quiet};
use crate::wire::{self, Dialect, Incoming};

/// Starts, watches and restarts the server of one slot until `stop`.
pub(super) async fn supervise(
    index: usize,
    slot: &ArcSwapOption<Conn>,
    restarts: &AtomicU32,
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
        restarts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
        tracing::info!(adapter = %settings.name, process = index, pid = conn.pid.unwrap_or_default(), protocol = peer.dialect.version(), "hosted MCP server ready");
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
