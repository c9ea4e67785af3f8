//! One upstream, whichever transport: starting requests, fetching its lists, and keeping the
//! adapter's [`View`] fresh (on the TTL, and at once on the upstream's `list_changed`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_adapter_api::protocol::skills::SKILLS_EXTENSION;
use mcp_adapter_api::{CancellationToken, CatalogChanged, Change, Changes};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::catalog::{Lists, Naming, View};
use crate::exchange::{Flight, UpstreamError, drive_quiet};
use crate::http::{CallerCredential, Http, Outgoing};
use crate::stdio::Stdio;
use crate::wire::Dialect;

/// Pages of one list fetched at most (a server that never stops paging is cut off).
const MAX_PAGES: usize = 100;

/// The transport to the upstream.
#[derive(Debug)]
pub enum Transport {
    /// A remote Streamable HTTP server.
    Http(Box<Http>),
    /// Hosted stdio server processes.
    Stdio(Stdio),
}

impl Transport {
    /// Starts `out`; returns the flight and the dialect it was sent in.
    pub async fn start(&self, out: Outgoing<'_>, deadline: Instant) -> Result<(Flight, Dialect), UpstreamError> {
        match self {
            Self::Http(h) => {
                let dialect = h.session_for(out.credential.as_ref()).await?.dialect.clone();
                Ok((h.start(&out).await?, dialect))
            }
            Self::Stdio(s) => {
                let conn = s.conn(deadline).await?;
                let dialect = conn.peer().dialect.clone();
                Ok((conn.start(out.method, out.params, out.capabilities, out.progress)?, dialect))
            }
        }
    }

    /// The upstream's capabilities (connecting first when needed), as `credential` sees them.
    async fn capabilities(
        &self,
        deadline: Instant,
        credential: Option<&CallerCredential>,
    ) -> Result<Value, UpstreamError> {
        match self {
            Self::Http(h) => Ok(h.session_for(credential).await?.capabilities.clone()),
            Self::Stdio(s) => Ok(s.conn(deadline).await?.peer().capabilities.clone()),
        }
    }

    /// One of the adapter's own requests, answered in full: with the service credential, or
    /// `credential` for a caller's catalog.
    async fn ask(
        &self,
        method: &str,
        params: Map<String, Value>,
        deadline: Instant,
        credential: Option<&CallerCredential>,
    ) -> Result<Value, UpstreamError> {
        let out = Outgoing {
            method,
            params,
            capabilities: &json!({}),
            progress: false,
            param_headers: Vec::new(),
            propagation: &[],
            credential: credential.cloned(),
        };
        let (flight, _) = self.start(out, deadline).await?;
        drive_quiet(flight, deadline, &CancellationToken::new()).await
    }

    /// Every page of `method`'s `key` list.
    async fn list<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
        deadline: Instant,
        credential: Option<&CallerCredential>,
    ) -> Result<Vec<T>, UpstreamError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params = Map::new();
            if let Some(c) = cursor.take() {
                params.insert("cursor".into(), json!(c));
            }
            let page = self.ask(method, params, deadline, credential).await?;
            for item in page.get(key).and_then(Value::as_array).into_iter().flatten() {
                match serde_json::from_value(item.clone()) {
                    Ok(t) => items.push(t),
                    Err(e) => {
                        tracing::warn!(method, error = %e, "left out an entry the upstream listed: it does not parse");
                    }
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
                _ => return Ok(items),
            }
        }
        tracing::warn!(method, pages = MAX_PAGES, "the upstream kept paging: the rest of its list is left out");
        Ok(items)
    }

    /// All lists the upstream's capabilities advertise.
    async fn lists(&self, timeout: Duration) -> Result<Lists, UpstreamError> {
        let deadline = Instant::now() + timeout;
        let caps = self.capabilities(deadline, None).await?;
        let has = |c: &str| caps.get(c).is_some();
        let mut lists = Lists::default();
        if has("tools") {
            lists.tools = self.list("tools/list", "tools", deadline, None).await?;
        }
        if has("resources") {
            lists.resources = self.list("resources/list", "resources", deadline, None).await?;
            lists.templates = self.list("resources/templates/list", "resourceTemplates", deadline, None).await?;
        }
        if has("prompts") {
            lists.prompts = self.list("prompts/list", "prompts", deadline, None).await?;
        }
        // An entry with `"resources": "dynamic"` does not parse: left out with a warning.
        if caps.get("extensions").and_then(|e| e.get(SKILLS_EXTENSION)).is_some() {
            lists.skills = Some(self.list("skills/list", "skills", deadline, None).await?);
        }
        Ok(lists)
    }

    /// The tools `credential`'s caller sees (a catalog per caller: tools only).
    pub async fn caller_tools(&self, deadline: Instant, credential: &CallerCredential) -> Result<Lists, UpstreamError> {
        let caps = self.capabilities(deadline, Some(credential)).await?;
        let mut lists = Lists::default();
        if caps.get("tools").is_some() {
            lists.tools = self.list("tools/list", "tools", deadline, Some(credential)).await?;
        }
        Ok(lists)
    }
}

/// What the adapter shares with its refresh task.
#[derive(Debug)]
pub struct Shared {
    /// The transport.
    pub transport: Transport,
    /// What calls read.
    pub view: ArcSwap<View>,
    /// Which names are offered.
    pub naming: Naming,
    /// A label for logs (the URL or the program).
    pub label: String,
    /// Wakes the refresh task early (a `list_changed` arrived).
    pub refresh_now: Notify,
    /// Lists are fetched again after this long.
    pub ttl: Duration,
    /// Deadline of one refresh.
    pub request_timeout: Duration,
    /// Tells the runtime to rebuild its registry.
    pub catalog_changed: CatalogChanged,
    /// Publishes resource updates.
    pub changes: Changes,
    /// Set once the first refresh ended (well or not).
    pub first: watch::Sender<bool>,
    /// The upstream's list changes not yet passed on (bits of [`LIST_CHANGES`]).
    pub announced: AtomicU8,
}

/// The list-changed notifications an upstream sends, and ours.
const LIST_CHANGES: [(&str, Change); 3] = [
    ("notifications/tools/list_changed", Change::ToolsListChanged),
    ("notifications/prompts/list_changed", Change::PromptsListChanged),
    ("notifications/resources/list_changed", Change::ResourcesListChanged),
];

impl Shared {
    /// What the upstream sent outside a request: list changes refresh, resource updates are
    /// passed on.
    pub fn notice(&self, method: &str, params: &Value) {
        if let Some(bit) = LIST_CHANGES.iter().position(|(m, _)| *m == method) {
            self.announced.fetch_or(1 << bit, Ordering::Relaxed);
            self.refresh_now.notify_one();
            return;
        }
        match method {
            "notifications/resources/updated" => {
                if let Some(uri) = params.get("uri").and_then(Value::as_str) {
                    self.changes.publish(Change::ResourceUpdated(uri.to_owned()));
                }
            }
            _ => tracing::debug!(upstream = %self.label, method, "upstream notification ignored"),
        }
    }

    /// Fetches the lists; swaps in the new view and signals the runtime when it differs (the
    /// runtime then announces what changed). A `list_changed` of the upstream that changed
    /// nothing we offer is still passed on: our callers may list again, no harm done.
    async fn refresh(&self) -> Result<(), UpstreamError> {
        let announced = self.announced.swap(0, Ordering::Relaxed);
        let lists = self.transport.lists(self.request_timeout).await?;
        let view = View::build(lists, &self.naming, &self.label);
        if view.fingerprint != self.view.load().fingerprint {
            tracing::info!(upstream = %self.label, tools = view.catalog.tools.len(), prompts = view.catalog.prompts.len(), resources = view.catalog.resources.len(), "upstream catalog loaded");
            self.view.store(Arc::new(view));
            self.catalog_changed.signal();
        } else {
            for (bit, (_, change)) in LIST_CHANGES.iter().enumerate() {
                if announced & (1 << bit) != 0 {
                    self.changes.publish(change.clone());
                }
            }
        }
        Ok(())
    }

    /// Refreshes at start, on each TTL and on each `list_changed`, until `stop`; a failed
    /// refresh keeps the last view and is tried again sooner.
    pub async fn keep_fresh(self: Arc<Self>, stop: CancellationToken) {
        let mut retry = Duration::from_millis(250);
        loop {
            let wait = match self.refresh().await {
                Ok(()) => {
                    retry = Duration::from_millis(250);
                    self.ttl
                }
                Err(e) => {
                    tracing::warn!(upstream = %self.label, error = %e, "cannot fetch the upstream's lists; keeping the last ones");
                    retry = (retry * 2).min(Duration::from_secs(30)).min(self.ttl);
                    retry
                }
            };
            self.first.send_replace(true);
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
                () = self.refresh_now.notified() => {}
            }
        }
    }
}
