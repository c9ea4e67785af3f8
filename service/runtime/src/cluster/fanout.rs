//! Change fan-out across replicas (MCP 2026-07-28 basic/patterns/subscriptions): every change published on one replica is
//! delivered locally at once and sent on a Redis channel; every replica's subscriber delivers
//! the changes of the others to its open listen streams. A subscriber that lost Redis tells its
//! listeners that everything may have changed when it gets back, since events may have been
//! missed; a publisher keeps what it could not send and sends it when Redis is back.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::Change;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::redis::Redis;
use crate::events::{Event, Events};

/// One change on the wire.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Wire {
    /// Publishing replica (its own messages are skipped: it delivered them already).
    o: String,
    /// `tools`, `prompts`, `resources` or `updated`.
    k: String,
    /// The updated URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    u: Option<String>,
    /// The MCP path whose listeners hear it (absent: every path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
}

fn to_wire(origin: &str, event: &Event) -> Wire {
    let (k, u) = match &event.change {
        Change::ToolsListChanged => ("tools", None),
        Change::PromptsListChanged => ("prompts", None),
        Change::ResourcesListChanged => ("resources", None),
        Change::ResourceUpdated(uri) => ("updated", Some(uri.clone())),
    };
    Wire { o: origin.to_owned(), k: k.to_owned(), u, p: event.path.as_deref().map(str::to_owned) }
}

fn from_wire(w: Wire) -> Option<Event> {
    let change = match (w.k.as_str(), w.u) {
        ("tools", _) => Change::ToolsListChanged,
        ("prompts", _) => Change::PromptsListChanged,
        ("resources", _) => Change::ResourcesListChanged,
        ("updated", Some(uri)) => Change::ResourceUpdated(uri),
        _ => return None,
    };
    Some(Event { path: w.p.map(Arc::from), change })
}

/// Connects `events` to the cluster through `redis` until `shutdown`.
pub fn start(redis: Arc<Redis>, events: &Events, replica: String, shutdown: CancellationToken) {
    let channel = redis.key("events");
    let (tx, rx) = mpsc::unbounded_channel();
    events.set_remote(tx);
    tokio::spawn(publish(Arc::clone(&redis), channel.clone(), replica.clone(), rx, shutdown.clone()));
    tokio::spawn(subscribe(redis, channel, replica, events.clone(), shutdown));
}

async fn publish(
    redis: Arc<Redis>,
    channel: String,
    replica: String,
    mut rx: mpsc::UnboundedReceiver<Event>,
    shutdown: CancellationToken,
) {
    // Changes that could not be sent yet; a set, so an outage cannot grow it without bound.
    let mut pending: BTreeSet<Wire> = BTreeSet::new();
    loop {
        tokio::select! {
            change = rx.recv() => match change {
                Some(c) => {
                    pending.insert(to_wire(&replica, &c));
                }
                None => return,
            },
            // Retry what an outage held back.
            () = tokio::time::sleep(Duration::from_millis(500)), if !pending.is_empty() => {}
            () = shutdown.cancelled() => return,
        }
        while let Some(w) = pending.first().cloned() {
            let payload = serde_json::to_string(&w).expect("serializable change");
            let sent = redis
                .call(|mut con| {
                    let channel = channel.clone();
                    async move { redis::cmd("PUBLISH").arg(channel).arg(payload).query_async::<i64>(&mut con).await }
                })
                .await;
            if sent.is_err() {
                break;
            }
            pending.remove(&w);
        }
    }
}

async fn subscribe(redis: Arc<Redis>, channel: String, replica: String, events: Events, shutdown: CancellationToken) {
    let refresh = || {
        // Events may have been lost while we were away: listeners refresh everything.
        for c in [Change::ToolsListChanged, Change::PromptsListChanged, Change::ResourcesListChanged] {
            events.deliver_local(Event::everywhere(c));
        }
    };
    redis
        .listen(&channel, &shutdown, refresh, |payload| {
            if let Ok(wire) = serde_json::from_str::<Wire>(payload)
                && wire.o != replica
                && let Some(event) = from_wire(wire)
            {
                events.deliver_local(event);
            }
        })
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_round_trip_on_the_wire() {
        for c in [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
            Change::ResourceUpdated("x://y".into()),
        ] {
            for path in [None, Some(Arc::from("/mcp/support"))] {
                let event = Event { path, change: c.clone() };
                let w = to_wire("a", &event);
                let back: Wire = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
                assert_eq!(from_wire(back), Some(event));
            }
        }
    }
}
