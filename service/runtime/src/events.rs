//! Change events: what adapters and reloads publish and `subscriptions/listen` streams
//! deliver (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen). Delivered at once to this replica's listeners; when Redis is
//! configured, also handed to the cluster fan-out ([`crate::cluster::fanout`]), which
//! delivers other replicas' changes back here with [`Events::deliver_local`]. A change is
//! heard on every MCP path, or only on one (`server.path` or a virtual endpoint's: what a
//! registry rebuild found changed there).

use std::sync::{Arc, OnceLock};

use tokio::sync::broadcast::error::RecvError;

use mcp_adapter_api::{CatalogChanged, Change, Changes};
use tokio::sync::{Notify, broadcast, mpsc};

/// Events buffered per slow listener before it is told to refresh everything.
const CAPACITY: usize = 256;

/// The change bus of this replica. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Events {
    inner: Arc<Inner>,
}

/// A change and where it is heard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The MCP path whose listeners hear it; `None`: every path (what adapters publish).
    pub path: Option<Arc<str>>,
    /// What changed.
    pub change: Change,
}

impl Event {
    /// Heard on every path.
    pub fn everywhere(change: Change) -> Self {
        Self { path: None, change }
    }
}

/// One listen stream's receiver: the changes heard on its path.
#[derive(Debug)]
pub struct Listener {
    rx: broadcast::Receiver<Event>,
    path: Arc<str>,
}

impl Listener {
    /// The next change heard on this listener's path.
    pub async fn recv(&mut self) -> Result<Change, RecvError> {
        loop {
            let event = self.rx.recv().await?;
            if event.path.as_ref().is_none_or(|p| *p == self.path) {
                return Ok(event.change);
            }
        }
    }
}

#[derive(Debug)]
struct Inner {
    local: broadcast::Sender<Event>,
    remote: OnceLock<mpsc::UnboundedSender<Event>>,
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

    /// Delivers `event` to the open listen streams of its path on this replica and, through
    /// the cluster fan-out, on every other replica.
    pub fn publish(&self, event: Event) {
        if let Some(remote) = self.inner.remote.get() {
            let _ = remote.send(event.clone());
        }
        self.deliver_local(event);
    }

    /// Delivers `event` to this replica's listen streams only.
    pub fn deliver_local(&self, event: Event) {
        // No receivers is fine: nobody is listening.
        let _ = self.inner.local.send(event);
    }

    /// Routes published changes to the cluster as well (set once, at start-up).
    pub fn set_remote(&self, tx: mpsc::UnboundedSender<Event>) {
        let _ = self.inner.remote.set(tx);
    }

    /// A receiver for one listen stream on `path` (`server.path` or a virtual endpoint's).
    pub fn subscribe(&self, path: &str) -> Listener {
        Listener { rx: self.inner.local.subscribe(), path: Arc::from(path) }
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
        Changes::new(move |change| events.publish(Event::everywhere(change)))
    }
}
