//! What a method answers, before any transport sees it: one message, an error, a stream of
//! messages (MCP 2026-07-28 basic/transports/streamable-http § Responses: JSON or SSE), or
//! nothing. The transport (`http`) turns it into a response; nothing below it knows HTTP
//! bodies or SSE framing.

use axum::http::StatusCode;
use mcp_protocol::RequestId;
use tokio::sync::mpsc;

use super::RpcError;

/// A method's answer.
#[derive(Debug)]
pub enum Reply {
    /// One JSON-RPC message, and the status it goes with (a call's error keeps its own).
    Message(StatusCode, Vec<u8>),
    /// A JSON-RPC error echoing `id`: status and headers are those its kind calls for.
    Error(Option<RequestId>, RpcError),
    /// Messages as they come: notifications and keep-alives, usually ending with the result.
    Stream(mpsc::Receiver<Frame>),
    /// Nothing to answer (a notification was accepted).
    Accepted,
}

impl Reply {
    /// A result (or any message) answered with 200.
    pub fn ok(body: Vec<u8>) -> Self {
        Self::Message(StatusCode::OK, body)
    }
}

/// One item of a streamed answer.
#[derive(Debug)]
pub enum Frame {
    /// A JSON-RPC message.
    Message(Vec<u8>),
    /// Nothing to say yet: keeps idle proxies from closing the stream; clients ignore it.
    KeepAlive,
}
