//! The last calls of this replica, for the operator console's Calls page: a bounded ring
//! behind a short lock (one push per finished call, a copy per console refresh). It exists
//! only while the console is enabled; otherwise the request path never sees it.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use super::records::CallRecord;

/// One finished call (`tools/call`, `prompts/get`, `resources/read`) as the Calls page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RecentCall {
    /// When it finished (Unix milliseconds).
    pub at_ms: u64,
    /// The MCP method.
    pub method: &'static str,
    /// Tool or prompt name, or resource URI.
    pub name: std::sync::Arc<str>,
    /// The caller's subject (`None`: anonymous).
    #[serde(serialize_with = "subject")]
    pub caller: Option<std::sync::Arc<str>>,
    /// The client as `name/version`, when the request named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<std::sync::Arc<str>>,
    /// As the call log line says it (`ok`, `tool_error`, `input_required`, `denied`, ...).
    pub outcome: &'static str,
    /// Milliseconds until the final message.
    pub duration_ms: f64,
    /// The request id header.
    pub request_id: Option<String>,
    /// The reason, on failure.
    pub error: Option<String>,
    /// The arguments, only when `console.show_arguments` is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

fn subject<S: serde::Serializer>(caller: &Option<std::sync::Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_some(&caller.as_deref())
}

/// The ring of the last `capacity` calls.
#[derive(Debug)]
pub struct RecentCalls {
    capacity: usize,
    /// Whether calls keep their arguments.
    pub show_arguments: bool,
    ring: Mutex<VecDeque<RecentCall>>,
}

impl RecentCalls {
    /// An empty ring of `capacity` calls.
    pub fn new(capacity: usize, show_arguments: bool) -> Self {
        let capacity = capacity.max(1);
        Self { capacity, show_arguments, ring: Mutex::new(VecDeque::with_capacity(capacity)) }
    }

    /// Adds a drain's finished calls, oldest first, dropping the oldest when full (on the
    /// call-records writer's thread, off the request path). Only the batch's last `capacity`
    /// calls are copied: the ones before them would be pushed out within the same batch.
    pub fn push(&self, batch: &[CallRecord]) {
        let kept = &batch[batch.len().saturating_sub(self.capacity)..];
        let calls: Vec<RecentCall> = kept.iter().map(|r| self.call(r)).collect();
        // A poisoned lock only means a panic elsewhere mid-push; the ring is still usable.
        let mut ring = self.ring.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for call in calls {
            if ring.len() == self.capacity {
                ring.pop_front();
            }
            ring.push_back(call);
        }
    }

    /// A record as the Calls page shows it.
    fn call(&self, r: &CallRecord) -> RecentCall {
        RecentCall {
            at_ms: r.at_ms,
            method: r.method,
            name: std::sync::Arc::clone(&r.name),
            caller: r.caller.clone(),
            client: r.client.as_deref().map(std::sync::Arc::from),
            outcome: r.outcome,
            duration_ms: r.duration_us as f64 / 1000.0,
            request_id: r.request_id.as_deref().map(str::to_owned),
            error: r.error.as_ref().map(ToString::to_string),
            arguments: if self.show_arguments { r.arguments.clone() } else { None },
        }
    }

    /// The calls, newest first.
    pub fn snapshot(&self) -> Vec<RecentCall> {
        let ring = self.ring.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        ring.iter().rev().cloned().collect()
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A finished call at `n` ms, on both clocks (shared with the call records' tests).
    pub fn call(n: u64) -> CallRecord {
        static START: std::sync::LazyLock<std::time::Instant> = std::sync::LazyLock::new(std::time::Instant::now);
        CallRecord {
            at_ms: n,
            finished: *START + std::time::Duration::from_millis(n),
            method: "tools/call",
            name: "echo".into(),
            endpoint: None,
            caller: None,
            client: None,
            outcome: "ok",
            error: None,
            duration_us: 1000,
            adapter: None,
            upstream: None,
            request_id: None,
            trace_id: None,
            round: 0,
            arguments_digest: None,
            result_digest: None,
            arguments: None,
        }
    }

    #[test]
    fn keeps_the_last_calls_newest_first() {
        let r = RecentCalls::new(3, false);
        r.push(&[call(0)]);
        let at = |r: &RecentCalls| r.snapshot().iter().map(|c| c.at_ms).collect::<Vec<_>>();
        assert_eq!(at(&r), [0]);
        // A batch longer than the ring: its last three stay.
        r.push(&(1..6).map(call).collect::<Vec<_>>());
        assert_eq!(at(&r), [5, 4, 3]);
        // A short batch pushes the oldest out.
        r.push(&[call(6), call(7)]);
        assert_eq!(at(&r), [7, 6, 5]);
    }
}
