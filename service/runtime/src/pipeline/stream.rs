//! Running a call whose request-scoped notifications (progress, log messages) may turn the
//! answer from JSON into an SSE stream (MCP 2026-07-28 basic/transports/streamable-http § Responses: JSON or SSE; basic/patterns/progress § request-scoped notifications).
//!
//! The answer stays plain JSON unless a notification that will really be sent arrives
//! before the result, or the call runs longer than one keep-alive interval: quick answers
//! therefore keep their proper status (MCP 2026-07-28 basic/transports/streamable-http § Responses: JSON or SSE) and the common case costs nothing extra,
//! while long calls send keep-alive comments that stop idle proxies from cutting them.
//! Once streaming, a closed stream drops the call, which is how a client cancels on HTTP
//! (MCP 2026-07-28 basic/patterns/cancellation).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use axum::http::StatusCode;
use mcp_adapter_api::Notice;
use mcp_protocol::meta::LOG_LEVELS;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::rpc::{Frame, Reply, response};

/// The final message of a call: status (used only if no stream started) and body.
pub type Final = (StatusCode, Vec<u8>);

/// Turns adapter notices into the JSON-RPC notifications this request opted in to.
#[derive(Debug)]
pub struct NoticeFormat {
    progress_token: Option<Value>,
    log_threshold: Option<usize>,
    last_progress: f64,
}

impl NoticeFormat {
    /// `None` when the request opted in to nothing (then no channel is created at all).
    pub fn new(progress_token: Option<Value>, log_threshold: Option<usize>) -> Option<Self> {
        (progress_token.is_some() || log_threshold.is_some()).then_some(Self {
            progress_token,
            log_threshold,
            last_progress: f64::NEG_INFINITY,
        })
    }

    /// The notification to send, or `None` for one the client did not ask for (or a progress
    /// value that does not increase, which the spec forbids).
    fn render(&mut self, notice: Notice) -> Option<Vec<u8>> {
        match notice {
            Notice::Progress { progress, total, message } => {
                let token = self.progress_token.as_ref()?;
                if progress.is_nan() || progress <= self.last_progress {
                    return None;
                }
                self.last_progress = progress;
                let mut params = json!({ "progressToken": token, "progress": number(progress) });
                if let Some(t) = total {
                    params["total"] = number(t);
                }
                if let Some(m) = message {
                    params["message"] = json!(m);
                }
                Some(response::notification("notifications/progress", &params))
            }
            Notice::Log { level, data } => {
                let threshold = self.log_threshold?;
                let rank = LOG_LEVELS.iter().position(|l| *l == level)?;
                (rank >= threshold)
                    .then(|| response::notification("notifications/message", &json!({ "level": level, "data": data })))
            }
        }
    }
}

/// Whole numbers go out as integers (`2`, not `2.0`): what clients and the examples expect.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        // Exact: whole and within f64's integer range.
        #[allow(clippy::cast_possible_truncation)]
        Value::from(n as i64)
    } else {
        json!(n)
    }
}

/// How a call may answer.
#[derive(Debug, Clone, Copy)]
pub struct Streaming {
    /// The client accepts `text/event-stream`.
    pub allowed: bool,
    /// SSE comment interval; also how long a quiet call may run before the answer switches
    /// to SSE anyway, so proxies with idle timeouts see bytes (MCP 2026-07-28 basic/transports/streamable-http § Responses: JSON or SSE, [PY] behaviour).
    pub keepalive: Duration,
}

/// Awaits `call`. The answer is one message, unless the client accepts SSE and either a wanted
/// notice arrives first or the call outlasts one keep-alive interval; then it is a stream of
/// notices and keep-alives ending with the final message. `call` comes boxed (`Unpin`): it
/// may move into a task of its own, and its callers' futures stay small.
pub async fn respond<F>(
    call: F,
    notices: Option<(mpsc::UnboundedReceiver<Notice>, NoticeFormat)>,
    mode: Streaming,
) -> Reply
where
    F: Future<Output = Final> + Send + Unpin + 'static,
{
    // The call may move to a task of its own below: it stays in the request's span.
    let mut call = tracing::Instrument::in_current_span(call);
    if !mode.allowed {
        let (status, body) = call.await;
        return Reply::Message(status, body);
    }
    // Most calls answer on their first poll: they need no keep-alive timer (a clock read and
    // a handle on the runtime's timer). A notice the call sent meanwhile is still in the
    // channel for the loop below.
    if let Poll::Ready((status, body)) = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut call).poll(cx))).await {
        return Reply::Message(status, body);
    }
    let (mut rx, mut format) = match notices {
        Some((rx, f)) => (Some(rx), Some(f)),
        None => (None, None),
    };
    let quiet = tokio::time::sleep(mode.keepalive);
    tokio::pin!(quiet);
    let first = loop {
        tokio::select! {
            biased;
            (status, body) = &mut call => return Reply::Message(status, body),
            notice = next(&mut rx) => if let Some(bytes) = format.as_mut().and_then(|f| f.render(notice)) {
                break Frame::Message(bytes);
            },
            () = &mut quiet => break Frame::KeepAlive,
        }
    };
    let (tx, body_rx) = mpsc::channel::<Frame>(32);
    tokio::spawn(async move {
        if tx.send(first).await.is_err() {
            return;
        }
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + mode.keepalive, mode.keepalive);
        loop {
            let out = tokio::select! {
                biased;
                // Client closed the stream: dropping `call` cancels it (MCP 2026-07-28 basic/patterns/cancellation).
                () = tx.closed() => return,
                (_, body) = &mut call => {
                    // Notifications emitted before the result go first.
                    while let Some(n) = rx.as_mut().and_then(|r| r.try_recv().ok()) {
                        if let Some(bytes) = format.as_mut().and_then(|f| f.render(n))
                            && tx.send(Frame::Message(bytes)).await.is_err() {
                                return;
                            }
                    }
                    let _ = tx.send(Frame::Message(body)).await;
                    return;
                }
                notice = next(&mut rx) => format.as_mut().and_then(|f| f.render(notice)).map(Frame::Message),
                _ = ticker.tick() => Some(Frame::KeepAlive),
            };
            if let Some(frame) = out
                && tx.send(frame).await.is_err()
            {
                return;
            }
        }
    });
    Reply::Stream(body_rx)
}

/// The next notice; pends forever when there is no channel or it closed.
async fn next(rx: &mut Option<mpsc::UnboundedReceiver<Notice>>) -> Notice {
    match rx {
        Some(r) => match r.recv().await {
            Some(n) => n,
            None => {
                *rx = None;
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_must_increase_and_logs_respect_the_level() {
        let mut f = NoticeFormat::new(Some(json!("t")), Some(3)).unwrap();
        let p = |v| Notice::Progress { progress: v, total: None, message: None };
        assert!(f.render(p(0.0)).is_some());
        assert!(f.render(p(0.0)).is_none());
        assert!(f.render(p(50.0)).is_some());
        assert!(f.render(Notice::Log { level: "info", data: json!("x") }).is_none());
        assert!(f.render(Notice::Log { level: "error", data: json!("x") }).is_some());
        assert!(NoticeFormat::new(None, None).is_none());
        let mut no_logs = NoticeFormat::new(Some(json!(1)), None).unwrap();
        assert!(no_logs.render(Notice::Log { level: "emergency", data: json!("x") }).is_none());
    }
}
