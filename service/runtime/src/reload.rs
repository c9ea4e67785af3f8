//! Configuration hot reload: on SIGHUP or when the file's content changes, build the new
//! adapters and registry off to the side, validate them, and swap them in atomically. A bad
//! file is rejected with its reason in the log and the old configuration keeps serving;
//! in-flight calls finish on the registry they started with (they hold an `Arc` snapshot).
//! Listeners on every replica hear about changed lists. The same swap follows an adapter
//! whose catalog changed at run time ([`watch_catalogs`]: an MCP upstream's lists).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::adapters;
use crate::auth::Authenticator;
use crate::config::{Config, ConfigError};
use crate::mrtr::Sealer;
use crate::state::AppState;

/// Watches the configuration `paths` name (files and folders, their content polled every
/// `poll`; `None` to only react to SIGHUP) until shutdown. A change is loaded once the set
/// has stopped changing for a moment, so files being written one by one (a folder being
/// copied) are not loaded half-way.
pub fn spawn(state: Arc<AppState>, paths: Vec<PathBuf>, poll: Option<Duration>) {
    // Installed now, before the "listening" line: a SIGHUP sent right after start-up reloads
    // instead of ending the process (the signal's default action).
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for SIGHUP; reloads only follow file changes");
            None
        }
    };
    tokio::spawn(async move {
        let shown = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" + ");
        // The pinning lock file is watched with the set: a new `pin` takes effect like an edit.
        let watched = || fingerprint(&paths, state.registry.load().config().pinning.lock_file.as_deref());
        let mut seen = watched();
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                Some(()) = async { match hangup.as_mut() { Some(h) => h.recv().await, None => std::future::pending().await } } => {
                    tracing::info!(path = %shown, "SIGHUP: reloading configuration");
                }
                () = sleep(poll) => {
                    let now = watched();
                    if now == seen {
                        continue;
                    }
                    // Settled: the same content a moment later (a half-written set waits).
                    tokio::time::sleep(SETTLE).await;
                    if watched() != now {
                        continue;
                    }
                    tracing::info!(path = %shown, "configuration changed: reloading");
                }
            }
            seen = watched();
            let result = reload(&state, &paths).await;
            state.metrics.reloaded(result.is_ok());
            if let Some(console) = &state.console {
                console.reloaded(result.as_ref().err().map(ToString::to_string));
            }
            match result {
                Ok(reloaded) => tracing::info!(
                    changed = %reloaded.changed.join(", "),
                    list_changes = reloaded.changes.len(),
                    "configuration reloaded"
                ),
                // One line with every problem, each `file:line:col: key: what (help)`.
                Err(e) => tracing::error!(
                    error = %summary(&e),
                    "configuration rejected; the previous one keeps serving"
                ),
            }
        }
    });
}

/// Rebuilds the registry from the current configuration and adapters whenever an adapter
/// signals a changed catalog, until shutdown. Requests keep reading the old registry until the
/// swap; a catalog the registry refuses (a name another adapter has) keeps the old one serving.
pub fn watch_catalogs(state: Arc<AppState>) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                () = state.events.catalog_changed() => {}
            }
            // A reload may swap in a registry (new configuration, new adapters) while this one
            // is built from the old: it is swapped in only over the one it was built from, else
            // built again from the reload's.
            loop {
                let old = state.registry.load_full();
                let registry = match old.rebuild() {
                    Ok(r) => Arc::new(r),
                    Err(e) => {
                        tracing::error!(error = %e, "an adapter's new catalog is refused; the previous one keeps serving");
                        break;
                    }
                };
                if !state.install_over(&old, Arc::clone(&registry)) {
                    continue;
                }
                let changes = registry.changes_since(&old);
                tracing::info!(changes = changes.len(), "an adapter's catalog changed: registry rebuilt");
                for event in changes {
                    state.events.publish(event);
                }
                break;
            }
        }
    });
}

async fn sleep(poll: Option<Duration>) {
    match poll {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// How long a changed configuration must stay the same before it is loaded.
const SETTLE: Duration = Duration::from_millis(300);

/// Hash of the set's file names and bytes (content, not mtime: Kubernetes swaps ConfigMap
/// files by symlink), and of the lock file's when there is one; a folder's files are listed
/// anew each time.
fn fingerprint(paths: &[PathBuf], lock: Option<&std::path::Path>) -> Option<u64> {
    let fnv =
        |h: u64, bytes: &[u8]| bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3));
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for file in crate::config::expand(paths).ok()? {
        hash = fnv(hash, file.as_os_str().as_encoded_bytes());
        hash = fnv(hash, &std::fs::read(&file).ok()?);
    }
    if let Some(lock) = lock {
        hash = fnv(hash, &std::fs::read(lock).unwrap_or_default());
    }
    Some(hash)
}

/// What a reload changed.
#[derive(Debug)]
pub struct Reloaded {
    /// The sections of the file that differ from the previous one (`tool_policies`,
    /// `adapters.text`), whether or not a client sees the difference.
    pub changed: Vec<String>,
    /// The list changes announced to clients, each on its path.
    pub changes: Vec<crate::events::Event>,
}

/// A rejected configuration on one line, for the log: every problem with its place.
fn summary(e: &ConfigError) -> String {
    match e {
        ConfigError::File(report) => report.one_line(),
        ConfigError::Invalid(problems) => problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
    }
}

/// Loads, validates and swaps in the configuration at `path` (the same stages as start-up,
/// every problem located in the file); returns what changed.
pub async fn reload(state: &AppState, paths: &[PathBuf]) -> Result<Reloaded, ConfigError> {
    let mut config = Config::read(paths, std::env::vars(), false)?;
    // Console approvals outlive a reload (the lock file is read anew).
    config.pinning.approved = state.registry.load().config().pinning.approved.clone();
    let built = adapters::load(&config, &state.events, &state.metrics).await;
    let (_, registry) = match built {
        Ok(built) => built,
        Err(problems) => return Err(config.rejected(problems)),
    };
    let config = config.checked()?;
    let changed = changed_sections(&state.registry.load().config().source.merged_json(), &config.source.merged_json());
    // Sections read at start-up only: said from what the files changed (a `--listen` given
    // at start-up is not a change).
    for section in ["server", "redis", "limits", "tasks", "telemetry", "tls", "user_auth", "upstream_auth"] {
        if changed.iter().any(|c| c == section) {
            tracing::warn!(section, "[{section}] changed: it takes effect after a restart");
        }
    }
    let old = state.install(Arc::new(registry));
    // A ring without keys would mint a new random key and break rounds in flight: keep it.
    if !config.request_state.keys.is_empty() {
        state.sealer.store(Arc::new(Sealer::new(&config.request_state)));
    }
    state.auth.store(config.auth.map(|a| Arc::new(Authenticator::new(a))));
    state.cache.clear_local();
    let changes = state.registry.load().changes_since(&old);
    for event in &changes {
        state.events.publish(event.clone());
    }
    Ok(Reloaded { changed, changes })
}

/// The top-level sections (and adapters, by name) whose content differs between two merged
/// configurations.
fn changed_sections(old: &serde_json::Value, new: &serde_json::Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (old, new) = (old.as_object().unwrap_or(&empty), new.as_object().unwrap_or(&empty));
    let adapters = |t: &serde_json::Map<String, serde_json::Value>| -> Vec<(String, serde_json::Value)> {
        let list = t.get("adapters").and_then(serde_json::Value::as_array).cloned().unwrap_or_default();
        list.into_iter()
            .map(|a| {
                let name = a.get("name").or_else(|| a.get("kind")).and_then(|n| n.as_str()).unwrap_or("?").to_owned();
                (name, a)
            })
            .collect()
    };
    let mut out: Vec<String> = Vec::new();
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).filter(|k| *k != "adapters").collect();
    keys.sort();
    keys.dedup();
    out.extend(keys.into_iter().filter(|k| old.get(*k) != new.get(*k)).cloned());
    let (old_adapters, new_adapters) = (adapters(old), adapters(new));
    for (name, a) in &new_adapters {
        if old_adapters.iter().find(|(n, _)| n == name).map(|(_, v)| v) != Some(a) {
            out.push(format!("adapters.{name}"));
        }
    }
    for (name, _) in old_adapters.iter().filter(|(n, _)| !new_adapters.iter().any(|(m, _)| m == n)) {
        out.push(format!("adapters.{name} (removed)"));
    }
    out
}
