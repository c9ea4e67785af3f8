//! Catalogs per caller: an HTTP upstream that lists its tools only to its signed-in users,
//! with no service credential to list with (`user_auth` without `auth`). The adapter's own
//! catalog is then one tool, `<prefix>connect`; each caller's tools are fetched with that
//! caller's own token on first use and kept for `catalog_ttl_ms`. The runtime lists them beside
//! the catalog ([`mcp_adapter_api::Adapter::caller_tools`]) and calls them like any other;
//! calling `<prefix>connect` connects the caller's account first (the runtime asks for it, as
//! for any tool of the adapter) and fetches their tools afresh.
//!
//! Only tools are per caller: such an upstream's prompts and resources are not offered.

use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::protocol::{CallToolResult, Tool, ToolAnnotations, empty_object_schema};
use mcp_adapter_api::{AdapterError, CallContext, ToolSpec};
use tokio::time::Instant;

use crate::catalog::{Naming, View};
use crate::http::CallerCredential;
use crate::upstream::Shared;

/// The connect tool's name before the prefix.
pub const CONNECT: &str = "connect";

/// How many callers' catalogs one replica keeps at once.
const CAPACITY: u64 = 10_000;

/// One caller's tools: the names calls map back, and the list as the runtime shows it.
#[derive(Debug)]
pub struct CallerView {
    /// The upstream's tools under our names (its catalog's tools moved to [`Self::tools`]).
    pub view: View,
    /// What `tools/list` shows this caller beside the catalog.
    pub tools: Arc<[ToolSpec]>,
}

/// Each caller's view of the upstream's tools, by caller key.
#[derive(Debug)]
pub struct Callers {
    views: moka::future::Cache<Arc<str>, Arc<CallerView>>,
    /// The `[[upstream_auth]]` name, for the words of the connect tool.
    upstream: String,
}

impl Callers {
    /// Views kept for `ttl` (the adapter's `catalog_ttl_ms`).
    pub fn new(ttl: Duration, upstream: &str) -> Self {
        Self {
            views: moka::future::Cache::builder().max_capacity(CAPACITY).time_to_live(ttl).build(),
            upstream: upstream.to_owned(),
        }
    }

    /// The connect tool, the one tool of the shared catalog.
    pub fn connect_tool(&self, naming: &Naming, label: &str) -> ToolSpec {
        let description = format!(
            "Connects your own {upstream} account, then lists the tools {label} offers you. Its tools are listed \
             only to people who connected: call this first (you may be asked to sign in, in a browser), then list \
             the tools again.",
            upstream = self.upstream,
            label = label.split(['?', '#']).next().unwrap_or_default(),
        );
        let tool = Tool {
            name: format!("{}{CONNECT}", naming.prefix),
            title: Some(format!("Connect {}", self.upstream)),
            description: Some(description),
            input_schema: Arc::new(empty_object_schema()),
            output_schema: None,
            annotations: Some(ToolAnnotations {
                read_only_hint: Some(true),
                open_world_hint: Some(true),
                ..Default::default()
            }),
            meta: None,
        };
        ToolSpec::new(tool)
    }

    /// The caller's view: kept, or fetched with their credential (`fresh`: fetched anyway).
    pub async fn view(&self, shared: &Shared, cx: &CallContext, fresh: bool) -> Result<Arc<CallerView>, AdapterError> {
        let credential = credential(cx).ok_or(AdapterError::UserTokenRefused)?;
        if fresh {
            self.views.invalidate(&credential.caller).await;
        }
        let fetch = async {
            let deadline = Instant::now() + shared.request_timeout;
            let mut lists = shared.transport.caller_tools(deadline.min(cx.deadline), &credential).await?;
            // Its own `connect` would take the name of ours.
            lists.tools.retain(|t| t.name != CONNECT);
            let mut view = View::build(lists, &shared.naming, &shared.label);
            let tools = std::mem::take(&mut view.catalog.tools).into();
            Ok::<_, crate::exchange::UpstreamError>(Arc::new(CallerView { view, tools }))
        };
        self.views.try_get_with(Arc::clone(&credential.caller), fetch).await.map_err(|e| match &*e {
            crate::exchange::UpstreamError::Unauthorized(_) => AdapterError::UserTokenRefused,
            other => AdapterError::Backend(format!("the upstream did not list the caller's tools: {other}")),
        })
    }

    /// The answer of the connect tool: the caller's tools, fetched afresh.
    pub async fn connect(&self, shared: &Shared, cx: &CallContext) -> Result<CallToolResult, AdapterError> {
        let view = self.view(shared, cx, true).await?;
        let mut names: Vec<&str> = view.tools.iter().map(|t| t.tool.name.as_str()).collect();
        names.sort_unstable();
        let text = match names.len() {
            0 => format!("Your {} account is connected, but it offers you no tools.", self.upstream),
            n => format!(
                "Your {} account is connected: {n} tool{} available to you ({}). List the tools again to see them.",
                self.upstream,
                if n == 1 { " is" } else { "s are" },
                names.join(", ")
            ),
        };
        Ok(CallToolResult::text(text))
    }
}

/// Whether `name` (ours) is the connect tool under `naming`.
pub fn is_connect(naming: &Naming, name: &str) -> bool {
    name.strip_prefix(naming.prefix.as_str()) == Some(CONNECT)
}

/// The caller's own credential for the upstream: the token the runtime took from its vault.
pub fn credential(cx: &CallContext) -> Option<CallerCredential> {
    let token = cx.user_token.as_ref()?;
    Some(CallerCredential {
        caller: cx.identity.as_ref().map(|i| i.key_arc()).unwrap_or_default(),
        authorization: token.authorization().clone(),
    })
}
