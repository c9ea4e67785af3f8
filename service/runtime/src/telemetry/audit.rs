//! The audit trail: call records as append-only JSON Lines, each line carrying the SHA-256
//! of the line before it, so an edited, removed or reordered line breaks the chain
//! (`mcp-runtime audit verify`, [`verify`]). A chain starts with a `start` line when the
//! writer starts (its `chain` id names the replica and the moment), goes on across rotated
//! files (a `file` line opens each new one), and has a `checkpoint` line every
//! `checkpoint_every` records or `checkpoint_seconds`; each checkpoint's digest is also
//! logged, so a trail cut short at its end shows against the log.
//!
//! Arguments never appear as they are unless `[audit.tools.<tool>] keep` names them: the
//! call carries the digest of all of them, and of each other one. Tokens never appear.

pub mod verify;

use std::io::Write as _;
use std::time::Instant;

use serde_json::Value;

use super::line::{Object, digest_value, hex_into};
use super::records::{CallRecord, digest};
use crate::config::{AuditConfig, AuditSink};

/// The `prev` of a chain's first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The trail's writer, owned by the call-records writer thread.
#[derive(Debug)]
pub struct Audit {
    config: AuditConfig,
    out: Out,
    chain: Chain,
    records: u64,
    since_checkpoint: u64,
    last_checkpoint: Instant,
    /// A write failed (full disk, closed pipe): said once until one succeeds again.
    failing: bool,
    /// The lines not yet written (reused from batch to batch).
    pending: Vec<u8>,
}

/// Where the chain stands: its id, this replica, the next line's `seq` and `prev`.
struct Chain {
    id: String,
    replica: String,
    seq: u64,
    prev: [u8; 32],
    /// The next lines' `at_ms`: the clock is read once a batch ([`Chain::now`]), as the
    /// batch's lines are written together.
    at_ms: u64,
    /// How every call line begins (`{"type":"call","chain":…,"replica":…`), written once.
    call_head: Vec<u8>,
    /// SHA-256 of the first `call_hashed` bytes of `call_head`, its whole 64-byte blocks
    /// (most of it, with the usual ids): a call line's digest goes on from there, a block less
    /// to hash for each.
    call_state: ring::digest::Context,
    call_hashed: usize,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain").field("id", &self.id).field("seq", &self.seq).finish_non_exhaustive()
    }
}

impl Chain {
    fn new(id: String, replica: String, at_ms: u64) -> Self {
        let call_head = head("call", &id, &replica);
        let call_hashed = call_head.len() / 64 * 64;
        let mut call_state = ring::digest::Context::new(&ring::digest::SHA256);
        call_state.update(&call_head[..call_hashed]);
        Self { id, replica, seq: 0, prev: [0; 32], at_ms, call_head, call_state, call_hashed }
    }

    /// Reads the clock for the lines that follow.
    fn now(&mut self) {
        self.at_ms = crate::clock::now_ms();
    }

    /// Appends one line of the chain to `out`, with its newline: `type`, `chain`, `replica`,
    /// `seq`, `prev`, `at_ms`, then what `fields` adds; the chain moves on to it.
    fn line(&mut self, out: &mut Vec<u8>, kind: &str, fields: impl FnOnce(&mut Object<'_>)) {
        let start = out.len();
        let call = kind == "call";
        if call {
            out.extend_from_slice(&self.call_head);
        } else {
            out.extend_from_slice(&head(kind, &self.id, &self.replica));
        }
        let mut o = Object::resume(out);
        o.u64("seq", self.seq)
            .with("prev", |out| {
                out.push(b'"');
                hex_into(out, &self.prev);
                out.push(b'"');
            })
            .u64("at_ms", self.at_ms);
        fields(&mut o);
        o.close();
        let line = &out[start..];
        self.prev = if call {
            debug_assert_eq!(line[..self.call_hashed], self.call_head[..self.call_hashed]);
            let mut state = self.call_state.clone();
            state.update(&line[self.call_hashed..]);
            state.finish().as_ref().try_into().expect("SHA-256 is 32 bytes")
        } else {
            digest(line)
        };
        self.seq += 1;
        out.push(b'\n');
    }
}

/// The start of a line of the chain: `{"type":…,"chain":…,"replica":…` (not closed).
fn head(kind: &str, chain: &str, replica: &str) -> Vec<u8> {
    let mut out = Vec::new();
    Object::open(&mut out).str("type", kind).str("chain", chain).str("replica", replica);
    out
}

enum Out {
    File {
        file: std::fs::File,
        written: u64,
        opened: Instant,
        /// Whether it is a regular file. A device or a pipe (`/dev/null`, `/dev/stdout`, a
        /// FIFO) is written to as it is and never rotated: renaming it would move the device
        /// node or the pipe, not start a new file.
        rotates: bool,
    },
    Stdout,
    /// One OTLP log record per line, its body the line as written to a file.
    Otlp(opentelemetry_sdk::logs::SdkLogger),
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::File { .. } => "File",
            Self::Stdout => "Stdout",
            Self::Otlp(_) => "Otlp",
        })
    }
}

impl Audit {
    /// Opens the sink (appending to an existing file) and starts a chain. The error says why
    /// the file cannot be written.
    pub fn open(config: &AuditConfig, replica: &str) -> Result<Self, String> {
        let out = match &config.sink {
            AuditSink::File { path, .. } => {
                let file = append(path)?;
                let rotates = file.metadata().is_ok_and(|m| m.file_type().is_file());
                Out::File { file, written: 0, opened: Instant::now(), rotates }
            }
            AuditSink::Stdout => Out::Stdout,
            AuditSink::Otlp => Out::Otlp(
                super::otel::audit_logger().ok_or("no OTLP logs exporter was built (telemetry.otlp_endpoint)")?,
            ),
        };
        let now = crate::clock::now_ms();
        let mut audit = Self {
            config: config.clone(),
            out,
            chain: Chain::new(format!("{replica}-{now}"), replica.to_owned(), now),
            records: 0,
            since_checkpoint: 0,
            last_checkpoint: Instant::now(),
            failing: false,
            pending: Vec::new(),
        };
        audit.chain.line(&mut audit.pending, "start", |_| {});
        audit.emit();
        Ok(audit)
    }

    /// Whether any tool keeps arguments as they are (calls then carry their arguments).
    pub fn keeps(&self) -> bool {
        self.config.keep.values().any(|k| !k.is_empty())
    }

    /// Appends one line per record (and a checkpoint when one is due), in as few writes as
    /// the file's size limit allows (it rotates between lines, never inside one).
    pub fn write(&mut self, batch: &[CallRecord]) {
        self.chain.now();
        for r in batch {
            self.call(r);
            self.records += 1;
            self.since_checkpoint += 1;
            if self.since_checkpoint >= self.config.checkpoint_every {
                self.checkpoint();
            }
            if self.full_after(self.pending.len() as u64) {
                self.emit();
                self.rotate_if_due();
            }
        }
        if self.since_checkpoint > 0 && self.last_checkpoint.elapsed() >= self.config.checkpoint_interval {
            self.checkpoint();
        }
        self.emit();
        self.rotate_if_due();
        // A burst's buffer does not stay resident.
        self.pending.shrink_to(1 << 20);
    }

    /// Whether the file reaches its size limit once `pending` more bytes are written.
    fn full_after(&self, pending: u64) -> bool {
        match (&self.config.sink, &self.out) {
            (AuditSink::File { max_bytes, .. }, Out::File { written, rotates: true, .. }) => {
                *max_bytes > 0 && written + pending >= *max_bytes
            }
            _ => false,
        }
    }

    /// A last checkpoint, flushed (at shutdown).
    pub fn close(&mut self) {
        self.chain.now();
        self.checkpoint();
        self.emit();
        if let Out::File { file, .. } = &mut self.out {
            let _ = file.sync_data();
        }
    }

    /// A call's line: what the record says, its arguments only as `[audit.tools.<tool>] keep`
    /// allows (every other one as its digest).
    fn call(&mut self, r: &CallRecord) {
        let keep = r.arguments.as_ref().and_then(|_| self.config.keep.get(&*r.name));
        self.chain.line(&mut self.pending, "call", |o| {
            o.u64("call_at_ms", r.at_ms).str("method", r.method).str("name", &r.name);
            if let Some(e) = &r.endpoint {
                o.str("endpoint", e);
            }
            o.opt_str("caller", r.caller.as_deref())
                .opt_text("client", r.client.as_ref())
                .str("outcome", r.outcome)
                .opt_str("error", r.error.as_deref())
                .millis("duration_ms", r.duration_us)
                .opt_str("adapter", r.adapter.as_deref())
                .opt_str("upstream", r.upstream.as_deref())
                .opt_text("request_id", r.request_id.as_ref())
                .opt_str("trace_id", r.trace_id.as_deref())
                .u64("round", u64::from(r.round))
                .digest("arguments_digest", r.arguments_digest.as_ref());
            if let (Some(keep), Some(Value::Object(args))) = (keep, &r.arguments) {
                o.with("arguments", |out| {
                    let mut shown = Object::open(out);
                    for (k, v) in args {
                        let text = serde_json::to_vec(v).unwrap_or_default();
                        let out = shown.entry(k);
                        if keep.contains(k) {
                            out.extend_from_slice(&text);
                        } else {
                            digest_value(out, &digest(&text));
                        }
                    }
                    shown.close();
                });
            }
            o.digest("result_digest", r.result_digest.as_ref());
        });
    }

    fn checkpoint(&mut self) {
        let records = self.records;
        self.chain.line(&mut self.pending, "checkpoint", |o| {
            o.u64("records", records);
        });
        self.since_checkpoint = 0;
        self.last_checkpoint = Instant::now();
        // The head of the chain in the ordinary log too: a trail cut short shows against it.
        tracing::info!(target: "mcp_runtime::audit", chain = %self.chain.id, seq = self.chain.seq - 1, digest = %hex(&self.chain.prev), records = self.records, "audit checkpoint");
    }

    /// Writes the pending lines (one `write`) and empties the buffer, written or not.
    fn emit(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = &self.pending;
        let result = match &mut self.out {
            Out::File { file, written, .. } => {
                *written += bytes.len() as u64;
                file.write_all(bytes)
            }
            Out::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Out::Otlp(logger) => {
                emit_records(logger, bytes);
                Ok(())
            }
        };
        match result {
            Ok(()) => self.failing = false,
            Err(e) if !self.failing => {
                self.failing = true;
                let lines = bytes.iter().filter(|b| **b == b'\n').count();
                tracing::error!(target: "mcp_runtime::audit", error = %e, lines, "audit trail: cannot write; these lines are lost and the chain shows the gap");
            }
            Err(_) => {}
        }
        self.pending.clear();
    }

    /// Rotates the file when it is past its size or age: renamed to `<file>.<UTC time>`, a
    /// new file opened, and its first line (`file`) continues the chain.
    fn rotate_if_due(&mut self) {
        let AuditSink::File { path, max_bytes, max_age } = &self.config.sink else { return };
        let Out::File { written, opened, rotates: true, .. } = &self.out else { return };
        let due = (*max_bytes > 0 && *written >= *max_bytes) || max_age.is_some_and(|a| opened.elapsed() >= a);
        if !due {
            return;
        }
        let rotated = path.with_file_name(format!(
            "{}.{}-{:012}",
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            rotation_stamp(),
            self.chain.seq
        ));
        let path = path.clone();
        if let Err(e) = std::fs::rename(&path, &rotated) {
            tracing::error!(target: "mcp_runtime::audit", error = %e, file = %path.display(), "audit trail: cannot rotate; going on in the same file");
            if let Out::File { written, opened, .. } = &mut self.out {
                *written = 0;
                *opened = Instant::now();
            }
            return;
        }
        match append(&path) {
            Ok(file) => {
                self.out = Out::File { file, written: 0, opened: Instant::now(), rotates: true };
                let previous = rotated.display().to_string();
                self.chain.line(&mut self.pending, "file", |o| {
                    o.str("previous_file", &previous);
                });
                self.emit();
            }
            Err(e) => tracing::error!(target: "mcp_runtime::audit", error = %e, "audit trail: cannot open a new file"),
        }
    }
}

/// The lines as OTLP log records: the body is the line (so the collector's copy verifies as
/// a file does), `event.name` is `mcp.audit.<type>`.
fn emit_records(logger: &opentelemetry_sdk::logs::SdkLogger, lines: &[u8]) {
    use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, Severity};
    // Only `str`s and JSON went in: every line is UTF-8.
    for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(String::from_utf8_lossy) {
        let mut record = logger.create_log_record();
        record.set_event_name(event_name(&line));
        record.set_severity_number(Severity::Info);
        record.set_severity_text("INFO");
        record.set_timestamp(std::time::SystemTime::now());
        record.set_body(AnyValue::String(line.into_owned().into()));
        logger.emit(record);
    }
}

/// `mcp.audit.<type>` of a line (every line starts with `{"type":"<type>"`).
fn event_name(line: &str) -> &'static str {
    const NAMES: [(&str, &str); 4] = [
        ("{\"type\":\"call\"", "mcp.audit.call"),
        ("{\"type\":\"checkpoint\"", "mcp.audit.checkpoint"),
        ("{\"type\":\"start\"", "mcp.audit.start"),
        ("{\"type\":\"file\"", "mcp.audit.file"),
    ];
    NAMES.iter().find(|(prefix, _)| line.starts_with(prefix)).map_or("mcp.audit", |(_, name)| name)
}

/// What `check` can say of the trail's file without writing to it: that `serve` could open it
/// for appending (the file is writable, or its folder exists to create it in).
pub fn check_writable(config: &AuditConfig) -> Result<(), crate::config::ConfigProblem> {
    let AuditSink::File { path, .. } = &config.sink else { return Ok(()) };
    let problem = |why: String| crate::config::ConfigProblem::new("audit.file", why);
    // Opening a pipe for writing waits for its reader: `check` would hang on it.
    if is_fifo(path) {
        return Ok(());
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| problem(format!("cannot open {} for appending: {e}", path.display())))
    } else {
        match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) if !dir.is_dir() => Err(problem(format!("{} is not an existing folder", dir.display()))),
            _ => Ok(()),
        }
    }
}

/// Opens `path` for appending, creating it. Opening a named pipe waits until it has a
/// reader: after a second of that the log says so, or `serve` would seem stuck at start-up.
fn append(path: &std::path::Path) -> Result<std::fs::File, String> {
    let open = |path: &std::path::Path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {} for appending: {e}", path.display()))
    };
    if !is_fifo(path) {
        return open(path);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let pipe = path.to_owned();
    std::thread::spawn(move || tx.send(open(&pipe)));
    let opened = match rx.recv_timeout(std::time::Duration::from_secs(1)) {
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            tracing::warn!(
                "audit.file: {} is a named pipe that nobody reads yet; waiting for its reader (the log shipper) before serving",
                path.display()
            );
            rx.recv().ok()
        }
        other => other.ok(),
    };
    opened.unwrap_or_else(|| Err(format!("cannot open {} for appending", path.display())))
}

/// Whether `path` is a named pipe (opening one for writing waits for its reader).
fn is_fifo(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    return std::fs::metadata(path).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
    #[cfg(not(unix))]
    return false;
}

/// `20261203T101500Z`: sorts as time does (and the zero-padded seq after it, within one
/// second), so `audit.jsonl.*` lists rotated files in order.
fn rotation_stamp() -> String {
    let secs = crate::clock::now_ms() / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = crate::clock::civil(i64::try_from(days).unwrap_or(0));
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    hex_into(&mut out, bytes);
    String::from_utf8(out).unwrap_or_default()
}
