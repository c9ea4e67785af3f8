//! Change events: what adapters and reloads publish and `subscriptions/listen` streams
//! deliver (digest h.2). In-process broadcast on one replica; the Redis bus extends it to
//! every replica.

use mcp_adapter_api::{Change, Changes};
use tokio::sync::broadcast;

/// Events buffered per slow listener before it is told to refresh everything.
const CAPACITY: usize = 256;

/// The change bus of this replica.
#[derive(Debug, Clone)]
pub struct Events {
    tx: broadcast::Sender<Change>,
}

impl Default for Events {
    fn default() -> Self {
        Self::new()
    }
}

impl Events {
    /// An empty bus.
    pub fn new() -> Self {
        Self { tx: broadcast::channel(CAPACITY).0 }
    }

    /// Delivers `change` to every open listen stream of this replica.
    pub fn publish(&self, change: Change) {
        // No receivers is fine: nobody is listening.
        let _ = self.tx.send(change);
    }

    /// A receiver for one listen stream.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.tx.subscribe()
    }

    /// The handle adapters publish through.
    pub fn handle(&self) -> Changes {
        let events = self.clone();
        Changes::new(move |change| events.publish(change))
    }
}
