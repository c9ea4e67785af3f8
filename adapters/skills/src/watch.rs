//! The served snapshot and its renewal: a scan swaps in a new snapshot when the walk's
//! fingerprint changed, logs what it left out, announces every changed file
//! (`notifications/resources/updated`) and asks the runtime to read the catalog again (so
//! `skills/list`, `skills/get` and the directories follow). A poll of the folder's names,
//! sizes and modification times runs the scan every `poll_interval_ms`; a read that finds a
//! file changed runs it at once. No watcher crate: none is in the tree, and a poll works the
//! same on every file system (network mounts, container volumes) at a cost of one `stat` per
//! entry per interval.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_adapter_api::{CatalogChanged, Change, Changes};

use crate::scan::{self, Snapshot};
use crate::walk;

/// What the adapter and its poll share.
#[derive(Debug)]
pub struct Shared {
    /// The adapter's configured name (log lines).
    pub name: String,
    /// The canonical root.
    pub root: PathBuf,
    /// What is served now.
    pub view: ArcSwap<Snapshot>,
    changes: Changes,
    catalog_changed: CatalogChanged,
    /// One scan at a time.
    scanning: tokio::sync::Mutex<()>,
}

impl Shared {
    /// The state over a first snapshot (already logged by the caller).
    pub fn new(
        name: String,
        root: PathBuf,
        first: Snapshot,
        changes: Changes,
        catalog_changed: CatalogChanged,
    ) -> Self {
        Self { name, root, view: ArcSwap::from_pointee(first), changes, catalog_changed, scanning: Default::default() }
    }

    /// Scans the root again; swaps in and announces a new snapshot when anything changed.
    pub async fn rescan(self: &Arc<Self>) {
        let _one = self.scanning.lock().await;
        let me = Arc::clone(self);
        let scanned = tokio::task::spawn_blocking(move || {
            let previous = me.view.load_full();
            let tree = match walk::walk(&me.root) {
                Ok(tree) => tree,
                Err(e) => {
                    tracing::warn!(adapter = %me.name, root = %me.root.display(), error = %e, "skills root unreadable; serving the last scan");
                    return None;
                }
            };
            (tree.fingerprint() != previous.fingerprint).then(|| (scan::snapshot(tree, Some(&previous)), previous))
        })
        .await;
        let Ok(Some((next, previous))) = scanned else { return };
        let known: HashSet<&String> = previous.problems.iter().collect();
        for problem in next.problems.iter().filter(|p| !known.contains(p)) {
            tracing::warn!(adapter = %self.name, problem = %problem, "skill file left out");
        }
        let changed: Vec<String> = previous
            .files
            .iter()
            .filter(|(uri, f)| next.files.get(*uri).is_none_or(|n| n.digest != f.digest))
            .map(|(uri, _)| uri.clone())
            .collect();
        tracing::info!(
            adapter = %self.name,
            skills = next.skills.entries.len(),
            files = next.files.len(),
            changed = changed.len(),
            "skills rescanned"
        );
        self.view.store(Arc::new(next));
        // The registry rebuild is asked for first (it runs off the request path: a host that
        // refreshes at once may still get the old entry, and sees the mismatch again).
        self.catalog_changed.signal();
        for uri in changed {
            self.changes.publish(Change::ResourceUpdated(uri));
        }
    }
}

/// Polls every `every` while the adapter lives (the task holds only a weak reference).
pub fn poll(shared: &Arc<Shared>, every: Duration) -> Option<tokio::task::AbortHandle> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let task = runtime.spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(shared) = weak.upgrade() else { return };
            shared.rescan().await;
        }
    });
    Some(task.abort_handle())
}
