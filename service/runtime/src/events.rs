//! Change events: what adapters and reloads publish and `subscriptions/listen` streams
//! deliver (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen). Delivered at once to this replica's listeners; when Redis is
//! configured, also handed to the cluster fan-out ([`crate::cluster::fanout`]), which
//! delivers other replicas' changes back here with [`Events::deliver_local`].

use std::sync::{Arc, OnceLock};

use mcp_adapter_api::{CatalogChanged, Change, Changes};
use tokio::sync::{Notify, broadcast, mpsc};

/// Events buffered per slow listener before it is told to refresh everything.
const CAPACITY: usize = 256;

/// The change bus of this replica. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Events {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    local: broadcast::Sender<Change>,
    remote: OnceLock<mpsc::UnboundedSender<Change>>,
    /// An adapter's catalog changed at run time: the registry is rebuilt ([`crate::reload`]).
    catalogs: Notify,
}

impl Default for Events {
    fn default() -> Self {
        Self::new()
    }
}

impl Events {
    /// An empty bus.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                local: broadcast::channel(CAPACITY).0,
                remote: OnceLock::new(),
                catalogs: Notify::new(),
            }),
        }
    }

    /// Delivers `change` to every open listen stream of this replica and, through the
    /// cluster fan-out, of every other replica.
    pub fn publish(&self, change: Change) {
        if let Some(remote) = self.inner.remote.get() {
            let _ = remote.send(change.clone());
        }
        self.deliver_local(change);
    }

    /// Delivers `change` to this replica's listen streams only.
    pub fn deliver_local(&self, change: Change) {
        // No receivers is fine: nobody is listening.
        let _ = self.inner.local.send(change);
    }

    /// Routes published changes to the cluster as well (set once, at start-up).
    pub fn set_remote(&self, tx: mpsc::UnboundedSender<Change>) {
        let _ = self.inner.remote.set(tx);
    }

    /// A receiver for one listen stream.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.inner.local.subscribe()
    }

    /// The handle adapters signal a changed catalog through (one stored wake-up: signals that
    /// arrive while a rebuild runs cause one more rebuild, not one each).
    pub fn catalog_handle(&self) -> CatalogChanged {
        let events = self.clone();
        CatalogChanged::new(move || events.inner.catalogs.notify_one())
    }

    /// Waits for an adapter's catalog to change.
    pub async fn catalog_changed(&self) {
        self.inner.catalogs.notified().await;
    }

    /// The handle adapters publish through.
    pub fn handle(&self) -> Changes {
        let events = self.clone();
        Changes::new(move |change| events.publish(change))
    }
}
