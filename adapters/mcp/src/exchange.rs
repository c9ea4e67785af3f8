//! One request to an upstream, whatever the transport: a [`Flight`] yields what the upstream
//! sends until the answer; [`drive`] runs it under the call's deadline and cancellation,
//! hands notifications and the upstream's own requests to the caller, and answers `ping`.
//! Dropping a flight before its answer cancels the request upstream (the HTTP stream is
//! closed, MCP 2026-07-28 basic/transports/streamable-http § Cancellation; stdio gets
//! `notifications/cancelled`).

use std::time::Duration;

use mcp_adapter_api::CancellationToken;
use mcp_adapter_api::protocol::ErrorObject;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::http::HttpFlight;
use crate::stdio::StdioFlight;
use crate::wire::Incoming;

/// What went wrong talking to the upstream.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// It cannot be reached (connection refused, no process running).
    #[error("the upstream is unreachable: {0}")]
    Unreachable(String),
    /// It answered something unusable, or went away mid-request.
    #[error("the upstream failed: {0}")]
    Failed(String),
    /// It answered with a JSON-RPC error.
    #[error("the upstream answered an error: {} ({})", .0.message, .0.code)]
    Rpc(ErrorObject),
    /// It refused the request's credential (HTTP 401).
    #[error("the upstream refused our credential (HTTP 401){}", .0.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    Unauthorized(Option<String>),
    /// No answer in time.
    #[error("the upstream did not answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// Our caller went away.
    #[error("cancelled")]
    Cancelled,
}

/// A request in flight on one transport.
#[derive(Debug)]
pub enum Flight {
    /// Over Streamable HTTP.
    Http(Box<HttpFlight>),
    /// Over a hosted server's stdio.
    Stdio(StdioFlight),
}

impl Flight {
    /// The next message for this request; `None` when the upstream ended without answering.
    async fn next(&mut self) -> Result<Option<Incoming>, UpstreamError> {
        match self {
            Self::Http(f) => f.next().await,
            Self::Stdio(f) => f.next().await,
        }
    }

    /// Answers a request the upstream sent while this one runs.
    async fn respond(&mut self, id: &Value, outcome: Result<Value, ErrorObject>) -> Result<(), UpstreamError> {
        match self {
            Self::Http(f) => f.respond(id, outcome).await,
            Self::Stdio(f) => f.respond(id, outcome).await,
        }
    }
}

/// What to do with a request the upstream sent us.
#[derive(Debug)]
pub enum Answer {
    /// Send this back and go on.
    Reply(Result<Value, ErrorObject>),
    /// Stop here: the request ends with [`Ended::Asked`] (our caller must answer first).
    Stop,
}

/// How a driven request ended.
#[derive(Debug, PartialEq)]
pub enum Ended {
    /// The upstream's result.
    Result(Value),
    /// The upstream asked `method` with `params`, and the handler stopped the request.
    Asked {
        /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
        method: String,
        /// Its params.
        params: Value,
    },
}

/// What [`drive`] needs besides the flight.
pub struct Handlers<'a> {
    /// Give up then.
    pub deadline: Instant,
    /// Stop when this fires.
    pub cancel: &'a CancellationToken,
    /// Sees each notification the upstream sends for this request.
    pub notice: &'a mut (dyn FnMut(&str, &Value) + Send),
    /// Decides about each request the upstream sends (`ping` is answered here).
    pub ask: &'a mut (dyn FnMut(&str, &Value) -> Answer + Send),
}

impl std::fmt::Debug for Handlers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers").field("deadline", &self.deadline).finish_non_exhaustive()
    }
}

/// Drives one of the adapter's own requests (lists, ping): notifications ignored, upstream
/// requests refused.
pub async fn drive_quiet(
    flight: Flight,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<Value, UpstreamError> {
    let mut notice = |_: &str, _: &Value| {};
    let mut ask = |method: &str, _: &Value| Answer::Reply(Err(refusal(method)));
    let mut h = Handlers { deadline, cancel, notice: &mut notice, ask: &mut ask };
    match drive(flight, &mut h).await? {
        Ended::Result(v) => Ok(v),
        Ended::Asked { method, .. } => Err(UpstreamError::Failed(format!("it asked {method} unexpectedly"))),
    }
}

/// The error answered to an upstream request we cannot relay.
pub fn refusal(method: &str) -> ErrorObject {
    ErrorObject { code: -32601, message: format!("{method} is not available here"), data: None }
}

/// Runs `flight` to its end: the upstream's result (or error), a stop asked by `h.ask`, the
/// deadline, or cancellation. The flight is dropped (cancelling upstream) on every early end.
pub async fn drive(mut flight: Flight, h: &mut Handlers<'_>) -> Result<Ended, UpstreamError> {
    let started = Instant::now();
    loop {
        let message = tokio::select! {
            biased;
            m = flight.next() => m?,
            () = tokio::time::sleep_until(h.deadline) => return Err(UpstreamError::Timeout(started.elapsed())),
            () = h.cancel.cancelled() => return Err(UpstreamError::Cancelled),
        };
        match message {
            None => return Err(UpstreamError::Failed("it closed the stream before answering".into())),
            Some(Incoming::Response { outcome, .. }) => return outcome.map(Ended::Result).map_err(UpstreamError::Rpc),
            Some(Incoming::Notification { method, params }) => (h.notice)(&method, &params),
            Some(Incoming::Request { id, method, params }) => {
                let answer = if method == "ping" { Answer::Reply(Ok(json!({}))) } else { (h.ask)(&method, &params) };
                match answer {
                    Answer::Reply(outcome) => flight.respond(&id, outcome).await?,
                    Answer::Stop => return Ok(Ended::Asked { method, params }),
                }
            }
        }
    }
}
