//! The 2025-era GET stream: list changes and updates of subscribed resources from the change bus (and fan-out) `subscriptions/listen` uses (MCP 2025-11-25 basic/transports § Listening for Messages from the Server).

use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;
use mcp_adapter_api::Change;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};

use crate::http::{handover, reply};
use crate::rpc::{Frame, Reply, response};
use crate::state::AppState;
use crate::state::streams::StreamSlot;

/// The session's SSE stream; ends when the client goes or the server stops, and gives back
/// its `slot` then.
pub fn stream(state: &Arc<AppState>, path: &str, digest: String, slot: StreamSlot) -> Response {
    let mut changes = state.events.subscribe(path);
    let (tx, rx) = mpsc::channel(32);
    let state = Arc::clone(state);
    tokio::spawn(async move {
        let _slot = slot;
        let mut tick = tokio::time::interval(Duration::from_secs(15));
        tick.tick().await;
        loop {
            let frame = tokio::select! {
                () = state.shutdown.cancelled() => return,
                () = tx.closed() => return,
                _ = tick.tick() => Frame::KeepAlive,
                change = changes.recv() => match change {
                    Ok(Change::ResourceUpdated(uri)) => {
                        let subscribed = super::prefs::subscribed(&state, &digest, &uri).await;
                        if !subscribed {
                            continue;
                        }
                        Frame::Message(response::notification("notifications/resources/updated", &json!({"uri": uri})))
                    }
                    Ok(change) => Frame::Message(list_changed(&change)),
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        for c in [Change::ToolsListChanged, Change::PromptsListChanged, Change::ResourcesListChanged] {
                            if tx.send(Frame::Message(list_changed(&c))).await.is_err() {
                                return;
                            }
                        }
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            };
            if tx.send(frame).await.is_err() {
                return;
            }
        }
    });
    handover::long_lived(reply::render(Reply::Stream(rx)))
}

fn list_changed(change: &Change) -> Vec<u8> {
    let method = match change {
        Change::ToolsListChanged => "notifications/tools/list_changed",
        Change::PromptsListChanged => "notifications/prompts/list_changed",
        _ => "notifications/resources/list_changed",
    };
    response::notification(method, &json!({}))
}
