//! Following an HTTP upstream's list changes: `subscriptions/listen` on a modern server
//! (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen), the session's GET
//! stream on a 2025-era one (MCP 2025-11-25 basic/transports § Listening for Messages from the
//! Server); reconnected with backoff.

use std::time::Duration;

use mcp_adapter_api::CancellationToken;
use reqwest::StatusCode;
use reqwest::header::ACCEPT;
use serde_json::{Map, Value, json};

use super::{
    BoxedStream as _, Http, Outgoing, PROTOCOL_VERSION, SESSION_ID, failed, is_event_stream, session_lost, unreachable,
};
use crate::exchange::UpstreamError;
use crate::sse::SseReader;
use crate::wire::{self, Dialect, Incoming};

impl Http {
    /// Follows the upstream's list changes until `stop`: `subscriptions/listen` on a modern
    /// server, the session's GET stream on a 2025-era one; reconnects with backoff.
    pub async fn watch(&self, stop: &CancellationToken, on_notice: &(dyn Fn(&str, &Value) + Send + Sync)) {
        let mut wait = Duration::from_millis(500);
        loop {
            let outcome = tokio::select! {
                () = stop.cancelled() => return,
                r = self.listen_once(on_notice) => r,
            };
            match outcome {
                Ok(Listen::Unsupported) => {
                    tracing::debug!(upstream = %self.url, "no change stream: lists refresh on their TTL only");
                    return;
                }
                Ok(Listen::Ended) => wait = Duration::from_millis(500),
                Err(e) => {
                    tracing::debug!(upstream = %self.url, error = %e, "change stream lost");
                    wait = (wait * 2).min(Duration::from_secs(30));
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    async fn listen_once(&self, on_notice: &(dyn Fn(&str, &Value) + Send + Sync)) -> Result<Listen, UpstreamError> {
        let session = self.session().await?;
        let response = match (&session.dialect, &session.id) {
            (Dialect::Modern, _) => {
                let filter =
                    json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true});
                let mut params = Map::new();
                params.insert("notifications".into(), filter);
                let out = Outgoing {
                    method: "subscriptions/listen",
                    params,
                    capabilities: &json!({}),
                    progress: false,
                    param_headers: Vec::new(),
                    propagation: &[],
                    credential: None,
                };
                self.post(&session, &out).await?
            }
            (Dialect::Legacy(v), Some(id)) => self
                .client
                .get(self.url.clone())
                .header(ACCEPT, "text/event-stream")
                .header(SESSION_ID, id.clone())
                .header(PROTOCOL_VERSION, v.as_str())
                .send()
                .await
                .map_err(unreachable)?,
            (Dialect::Legacy(_), None) => return Ok(Listen::Unsupported),
        };
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => return Ok(Listen::Unsupported),
            StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST if session.id.is_some() => {
                let status = response.status();
                if session_lost(status, self.read_json(response).await.ok().as_ref()) {
                    self.forget(&session, None).await;
                }
                return Err(failed(format!("the change stream answered HTTP {status}")));
            }
            s if !s.is_success() || !is_event_stream(response.headers()) => {
                return Err(failed(format!("the change stream answered HTTP {s}")));
            }
            _ => {}
        }
        let mut reader = SseReader::new(response.bytes_stream().boxed_stream(), self.max_message_bytes);
        while let Some(data) = reader.next_data().await.map_err(failed)? {
            match serde_json::from_str(&data).ok().and_then(Incoming::parse) {
                Some(Incoming::Notification { method, params }) => on_notice(&method, &params),
                // A request on this stream belongs to no call: no caller to relay it to.
                Some(Incoming::Request { id, method, .. }) => {
                    let answer = match method.as_str() {
                        "ping" => Ok(json!({})),
                        "roots/list" => Ok(wire::no_roots()),
                        _ => Err(crate::exchange::refusal(&method)),
                    };
                    let _ = self.base(&session, None).json(&wire::response(&id, answer)).send().await;
                }
                _ => {}
            }
        }
        Ok(Listen::Ended)
    }
}

enum Listen {
    /// The server has no change stream.
    Unsupported,
    /// It ended the stream.
    Ended,
}
