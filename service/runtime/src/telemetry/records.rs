//! Call records: one per call (`tools/call`, `prompts/get`, `resources/read`), the single
//! source of the per-call log line, the operator console's recent calls and the audit trail.
//!
//! A record is built on the request path from what the request already holds (shared
//! strings, the request id's bytes, static outcome names: no formatting) and pushed onto its
//! thread's bounded queue under that queue's own, uncontended lock. A writer thread takes
//! each queue's records every [`FLUSH`], or every [`BUSY_FLUSH`] under load (swapping in the
//! buffer it emptied the time before), and does everything slow: the log line, the console's
//! ring, the audit sinks. A full queue (a writer stalled on a full disk or a blocked pipe)
//! never slows a call: the record is dropped, counted in `mcp_call_records_dropped_total`,
//! and the drops are logged in one warning a second at most.
//!
//! Why a queue per thread, drained often, rather than one shared ring: a push then writes
//! memory its thread wrote a moment ago, still in its cache. A shared ring of 65 k slots is
//! 24 MB, every slot cold by the time the ring comes round to it (measured: the copy into the
//! slot and the writer's copy out were 1.4 % of a default `tools/call`'s CPU).

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metrics::Counter;
use serde_json::Value;

use self::queue::Queues;
pub use self::text::Text;
use super::audit::Audit;
use super::recent::RecentCalls;
use crate::config::LogFormat;

mod queue;
mod text;

/// Target of the one info line per call: method, name (tool, prompt or URI), caller, outcome
/// (`ok`, `tool_error`, `input_required`, `protocol_error`, `denied`, `rate_limited`,
/// `cancelled`), duration, request id and, on failure, the reason.
/// `RUST_LOG=info,mcp_runtime::call=warn` turns it off.
pub const CALL_LOG: &str = "mcp_runtime::call";

/// How often the writer drains the queues when calls are few: the longest a record waits
/// before its line.
pub const FLUSH: Duration = Duration::from_millis(50);

/// How often it drains them while calls are many (the last drain found [`BUSY`] records or
/// more): often enough that a thread's queue is still in its cache when the writer reads it
/// (at 60 k calls a second, 120 records of ~370 bytes). Measured against 20 ms: 2–3 % more
/// `tools/call` a second with the per-call line on.
pub const BUSY_FLUSH: Duration = Duration::from_millis(2);

/// Records per drain from which the writer counts as busy.
const BUSY: usize = 64;

/// How often dropped records are logged, at most.
const DROPS_LOGGED: Duration = Duration::from_secs(1);

/// How many records may wait for the writer, per thread (a second of calls at 65 k a second,
/// for a writer stalled that long).
pub const QUEUE: usize = 65_536;

/// Test builds only (the `test-fixtures` feature): the queue's length from this variable, so
/// a black-box test can fill it.
pub const QUEUE_ENV: &str = "MCP_TEST_CALL_RECORD_QUEUE";

fn queue_len() -> usize {
    let from_env = || std::env::var(QUEUE_ENV).ok()?.parse().ok();
    if cfg!(feature = "test-fixtures") { from_env().unwrap_or(QUEUE) } else { QUEUE }
}

/// One finished call.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// When it finished (Unix milliseconds). Set by the writer from [`Self::finished`]: the
    /// wall clock is read once a batch rather than once a call.
    pub at_ms: u64,
    /// When it finished, on the monotonic clock: the writer orders the records of several
    /// threads by it (two calls may finish in the same millisecond on two threads).
    pub finished: Instant,
    /// The MCP method.
    pub method: &'static str,
    /// Tool or prompt name (a tool's catalog name, whatever a virtual endpoint calls it), or
    /// resource URI.
    pub name: Arc<str>,
    /// The virtual endpoint (its path) the call came to; `None`: `server.path`.
    pub endpoint: Option<Arc<str>>,
    /// The caller: `issuer#subject` for an issued token, the subject of a static token
    /// (`None`: anonymous).
    pub caller: Option<Arc<str>>,
    /// The client as `name/version` (its `clientInfo`), when the request named it.
    pub client: Option<Text>,
    /// `ok`, `tool_error`, `input_required`, `protocol_error`, `denied`, `rate_limited`,
    /// `cancelled`.
    pub outcome: &'static str,
    /// The reason, on failure.
    pub error: Option<Cow<'static, str>>,
    /// Microseconds until the final message.
    pub duration_us: u64,
    /// The adapter that served it.
    pub adapter: Option<Arc<str>>,
    /// Where the adapter sends its calls (base URLs, a command line), when it has backends.
    pub upstream: Option<Arc<str>>,
    /// The `x-request-id` (`None` when it is not visible ASCII).
    pub request_id: Option<Text>,
    /// The W3C trace id, when the call was traced.
    pub trace_id: Option<Arc<str>>,
    /// The MRTR round: 0 for a first request, 1 for the retry that answers its questions,
    /// and so on (counted in the sealed `requestState`).
    pub round: u32,
    /// SHA-256 of the arguments' JSON, when the audit is on.
    pub arguments_digest: Option<[u8; 32]>,
    /// SHA-256 of the answer's body, when the audit is on.
    pub result_digest: Option<[u8; 32]>,
    /// The arguments, when the console shows them or the audit keeps some of them.
    pub arguments: Option<Value>,
}

impl CallRecord {
    /// A call refused before it was dispatched (an access rule): `method` as sent, when it
    /// names a call.
    pub fn refused(
        method: &str,
        name: &str,
        caller: Option<Arc<str>>,
        request_id: Option<Text>,
        reason: &'static str,
    ) -> Option<Self> {
        let method = ["tools/call", "prompts/get", "resources/read"].into_iter().find(|m| *m == method)?;
        Some(Self {
            at_ms: 0,
            finished: Instant::now(),
            method,
            name: Arc::from(name),
            endpoint: None,
            caller,
            client: None,
            outcome: "denied",
            error: Some(Cow::Borrowed(reason)),
            duration_us: 0,
            adapter: None,
            upstream: None,
            request_id,
            trace_id: None,
            round: 0,
            arguments_digest: None,
            result_digest: None,
            arguments: None,
        })
    }
}

/// Where records go: the threads' queues, and what the request path must know.
#[derive(Debug)]
pub struct Records {
    queues: Arc<Queues>,
    /// A queue's length.
    capacity: usize,
    /// Whether the log line is on (decided at start: `RUST_LOG`).
    pub log: bool,
    /// Whether calls need digests (the audit is on).
    pub audit: bool,
    /// Whether calls keep their arguments (the console shows them, or the audit keeps some).
    pub arguments: bool,
    dropped: Arc<AtomicU64>,
    dropped_total: Counter,
    /// The writer and its stop flag (set, then the thread unparked).
    writer: Mutex<Option<(JoinHandle<()>, Arc<AtomicBool>)>>,
}

impl Records {
    /// Starts the writer thread. `log`: the format of the per-call line, `None` when it is
    /// off. `None` when nothing would read a record: no log line, no console, no audit (the
    /// request path then builds none).
    pub fn start(
        log: Option<LogFormat>,
        recent: Option<Arc<RecentCalls>>,
        audit: Option<Audit>,
        dropped_total: Counter,
    ) -> Option<Arc<Self>> {
        if log.is_none() && recent.is_none() && audit.is_none() {
            return None;
        }
        let queues = Arc::new(Queues::default());
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let dropped = Arc::new(AtomicU64::new(0));
        let arguments = recent.as_ref().is_some_and(|r| r.show_arguments) || audit.as_ref().is_some_and(Audit::keeps);
        let auditing = audit.is_some();
        // A terminal gets the log layer's own (coloured) line; files and pipes the same line
        // written by hand, a batch at a time.
        let log = log.map(|format| if std::io::stderr().is_terminal() { None } else { Some(format) });
        let writer =
            Writer { queues: Arc::clone(&queues), log, recent, audit, dropped: Arc::clone(&dropped), out: Vec::new() };
        let handle =
            std::thread::Builder::new().name("call-records".into()).spawn(move || writer.run(&stopped)).ok()?;
        Some(Arc::new(Self {
            queues,
            capacity: queue_len(),
            log: log.is_some(),
            audit: auditing,
            arguments,
            dropped,
            dropped_total,
            writer: Mutex::new(Some((handle, stop))),
        }))
    }

    /// Hands `record` to the writer through this thread's queue, or drops and counts it when
    /// the queue is full. Never waits but for the writer's swap of the queue's buffer.
    pub fn submit(&self, record: CallRecord) {
        if !self.queues.push(record, self.capacity) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            self.dropped_total.increment(1);
        }
    }

    /// Writes what is queued and stops the writer (at shutdown; waits up to `grace`).
    pub fn finish(&self, grace: Duration) {
        let taken = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some((handle, stop)) = taken {
            stop.store(true, Ordering::Release);
            handle.thread().unpark();
            let deadline = Instant::now() + grace;
            while !handle.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if handle.is_finished() {
                let _ = handle.join();
            }
        }
    }
}

/// The writer thread's side.
struct Writer {
    queues: Arc<Queues>,
    /// The per-call line: `Some(None)` through `tracing`, `Some(Some(format))` by hand.
    log: Option<Option<LogFormat>>,
    /// The batch's call lines.
    out: Vec<u8>,
    recent: Option<Arc<RecentCalls>>,
    audit: Option<Audit>,
    dropped: Arc<AtomicU64>,
}

impl Writer {
    fn run(mut self, stop: &AtomicBool) {
        let mut batch = Vec::new();
        let mut every = FLUSH;
        let mut warned = None;
        loop {
            // Sleeping, not waiting on the queues: a sender never has a thread to wake. Parked
            // (a futex wait), not a channel's receive: that spins and yields before it sleeps,
            // every drain (measured: 4–6 sched_yield calls each time, on the CPU the calls need).
            // An early wake (`finish`'s unpark, or a spurious one) only drains sooner.
            std::thread::park_timeout(every);
            let stopping = stop.load(Ordering::Acquire);
            self.queues.take(&mut batch);
            every = if batch.len() >= BUSY { BUSY_FLUSH } else { FLUSH };
            self.write(&mut batch);
            // At most one warning a second, however often the writer drains.
            let due = stopping || warned.is_none_or(|at: Instant| at.elapsed() >= DROPS_LOGGED);
            let dropped = if due { self.dropped.swap(0, Ordering::Relaxed) } else { 0 };
            if dropped > 0 {
                warned = Some(Instant::now());
                tracing::warn!(
                    target: CALL_LOG,
                    dropped,
                    "call records dropped: the writer fell behind (a slow audit sink or log output); see mcp_call_records_dropped_total"
                );
            }
            if stopping {
                self.queues.take(&mut batch);
                self.write(&mut batch);
                if let Some(audit) = &mut self.audit {
                    audit.close();
                }
                return;
            }
        }
    }

    fn write(&mut self, batch: &mut Vec<CallRecord>) {
        if batch.is_empty() {
            return;
        }
        let (now_ms, now) = (crate::clock::now_ms(), Instant::now());
        for r in batch.iter_mut() {
            let ago = now.saturating_duration_since(r.finished).as_millis();
            r.at_ms = now_ms.saturating_sub(u64::try_from(ago).unwrap_or(u64::MAX));
        }
        for r in batch.iter() {
            match self.log {
                Some(Some(format)) => super::line::call(&mut self.out, r, format),
                Some(None) => log_line(r),
                None => {}
            }
        }
        if let Some(recent) = &self.recent {
            recent.push(batch);
        }
        if !self.out.is_empty() {
            // Under stderr's lock, so no other log line lands inside the batch; a failed
            // write (a closed pipe) loses these lines as it would lose any log line.
            let _ = std::io::stderr().lock().write_all(&self.out);
            self.out.clear();
            self.out.shrink_to(1 << 20);
        }
        if let Some(audit) = &mut self.audit {
            audit.write(batch);
        }
        batch.clear();
    }
}

/// The per-call line through `tracing` (to a terminal).
fn log_line(r: &CallRecord) {
    tracing::info!(
        target: CALL_LOG,
        method = r.method,
        name = &*r.name,
        endpoint = r.endpoint.as_deref(),
        caller = r.caller.as_deref().unwrap_or("-"),
        client = r.client.as_deref(),
        outcome = r.outcome,
        duration_ms = %format_args!("{:.1}", r.duration_us as f64 / 1000.0),
        request_id = r.request_id.as_deref().unwrap_or("-"),
        trace_id = r.trace_id.as_deref(),
        adapter = r.adapter.as_deref(),
        upstream = r.upstream.as_deref(),
        round = r.round,
        error = r.error.as_deref(),
        "call"
    );
}

/// SHA-256 of `value`'s compact JSON (what `serde_json::to_vec` writes), serialised into
/// this thread's buffer: no allocation per call.
pub fn digest_json(value: &Value) -> [u8; 32] {
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|buffer| {
        buffer.clear();
        let _ = serde_json::to_writer(&mut *buffer, value);
        let d = digest(buffer);
        // A rare huge argument does not stay resident in every worker thread.
        buffer.shrink_to(64 << 10);
        d
    })
}

/// SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::recent::tests::call;

    #[test]
    fn every_threads_records_arrive() {
        let recent = Arc::new(RecentCalls::new(10_000, false));
        let records = Records::start(None, Some(Arc::clone(&recent)), None, Counter::noop()).unwrap();
        // Four threads, each finishing every fourth call, across several flushes.
        std::thread::scope(|s| {
            for t in 0..4 {
                let records = &records;
                s.spawn(move || {
                    for n in (t..2_000).step_by(4) {
                        // Told apart by their durations (the writer sets `at_ms`).
                        records.submit(CallRecord { duration_us: n * 1000, ..call(n) });
                        if n % 500 == t {
                            std::thread::sleep(FLUSH);
                        }
                    }
                });
            }
        });
        records.finish(Duration::from_secs(5));
        let mut seen: Vec<u64> = recent.snapshot().iter().map(|c| c.duration_ms as u64).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..2_000).collect::<Vec<_>>());
        assert_eq!(records.dropped.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_writer_dates_each_record_by_when_it_finished() {
        let recent = Arc::new(RecentCalls::new(10, false));
        let records = Records::start(None, Some(Arc::clone(&recent)), None, Counter::noop()).unwrap();
        let finished = Instant::now() - Duration::from_secs(5);
        records.submit(CallRecord { at_ms: 0, finished, ..call(0) });
        records.finish(Duration::from_secs(5));
        let expected = crate::clock::now_ms() - 5_000;
        let at_ms = recent.snapshot()[0].at_ms;
        assert!(at_ms.abs_diff(expected) < 1_000, "at_ms {at_ms}, five seconds ago {expected}");
    }
}
