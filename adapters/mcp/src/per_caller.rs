//! Catalogs per caller: an HTTP upstream that lists its tools only to its signed-in users,
//! with no service credential to list with (`user_auth` or `token_exchange` without `auth`).
//! Each caller's tools are fetched with that caller's own credential on first use and kept
//! for `catalog_ttl_ms`; the runtime lists them beside the catalog
//! ([`mcp_adapter_api::Adapter::caller_tools`]) and calls them like any other. With
//! `token_exchange` every signed-in caller has a credential at once; with `user_auth` only once
//! they connected, so the adapter's own catalog is one tool, `<prefix>connect`: calling it
//! connects the caller's account first (the runtime asks for it, as for any tool of the
//! adapter) and fetches their tools afresh.
//!
//! Only tools are per caller: such an upstream's prompts and resources are not offered.

use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::protocol::{CallToolResult, Tool, ToolAnnotations, empty_object_schema};
use mcp_adapter_api::{AdapterError, CallContext, ToolSpec};
use tokio::time::Instant;

use crate::catalog::{Naming, View};
use crate::http::CallerCredential;
use crate::upstream::{Shared, Transport};

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
    /// The `[[upstream_auth]]` name (`user_auth`), for the words of the connect tool; `None`
    /// with `token_exchange`.
    upstream: Option<String>,
}

impl Callers {
    /// Views kept for `ttl` (the adapter's `catalog_ttl_ms`).
    pub fn new(ttl: Duration, upstream: Option<&str>) -> Self {
        Self {
            views: moka::future::Cache::builder().max_capacity(CAPACITY).time_to_live(ttl).build(),
            upstream: upstream.map(str::to_owned),
        }
    }

    /// The shared catalog's one tool, the connect tool, with `user_auth`.
    pub fn connect_tool(&self, naming: &Naming, label: &str) -> Option<ToolSpec> {
        let upstream = self.upstream.as_deref()?;
        let description = format!(
            "Connects your own {upstream} account, then lists the tools {label} offers you. Its tools are listed \
             only to people who connected: call this first (you may be asked to sign in, in a browser), then list \
             the tools again.",
            label = label.split(['?', '#']).next().unwrap_or_default(),
        );
        let tool = Tool {
            name: format!("{}{CONNECT}", naming.prefix),
            title: Some(format!("Connect {upstream}")),
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
        Some(ToolSpec::new(tool))
    }

    /// The caller's view: kept, or fetched with their credential (`fresh`: fetched anyway).
    pub async fn view(&self, shared: &Shared, cx: &CallContext, fresh: bool) -> Result<Arc<CallerView>, AdapterError> {
        let credential = credential(shared, cx).await?;
        if fresh {
            self.views.invalidate(&credential.caller).await;
        }
        let fetch = async {
            let deadline = Instant::now() + shared.request_timeout;
            let mut lists = shared.transport.caller_tools(deadline.min(cx.deadline), &credential).await?;
            // Its own `connect` would take the name of ours.
            if self.upstream.is_some() {
                lists.tools.retain(|t| t.name != CONNECT);
            }
            let mut view = View::build(lists, &shared.naming, &shared.label);
            let tools = std::mem::take(&mut view.catalog.tools).into();
            Ok::<_, crate::exchange::UpstreamError>(Arc::new(CallerView { view, tools }))
        };
        self.views.try_get_with(Arc::clone(&credential.caller), fetch).await.map_err(|e| match &*e {
            // The runtime asks the caller to connect again; an exchanged token has no such way.
            crate::exchange::UpstreamError::Unauthorized(_) if cx.user_token.is_some() => {
                AdapterError::UserTokenRefused
            }
            crate::exchange::UpstreamError::Unauthorized(_) => {
                AdapterError::Backend("the upstream refused the caller's exchanged token".into())
            }
            other => AdapterError::Backend(format!("the upstream did not list the caller's tools: {other}")),
        })
    }

    /// Whether `name` (ours) is the connect tool under `naming`.
    pub fn is_connect(&self, naming: &Naming, name: &str) -> bool {
        self.upstream.is_some() && name.strip_prefix(naming.prefix.as_str()) == Some(CONNECT)
    }

    /// The answer of the connect tool: the caller's tools, fetched afresh.
    pub async fn connect(&self, shared: &Shared, cx: &CallContext) -> Result<CallToolResult, AdapterError> {
        let view = self.view(shared, cx, true).await?;
        let mut names: Vec<&str> = view.tools.iter().map(|t| t.tool.name.as_str()).collect();
        names.sort_unstable();
        let upstream = self.upstream.as_deref().unwrap_or("upstream");
        let text = match names.len() {
            0 => format!("Your {upstream} account is connected, but it offers you no tools."),
            n => format!(
                "Your {upstream} account is connected: {n} tool{} available to you ({}). List the tools again to see them.",
                if n == 1 { " is" } else { "s are" },
                names.join(", ")
            ),
        };
        Ok(CallToolResult::text(text))
    }
}

/// The caller's own credential for the upstream: the token the runtime took from its vault
/// (`user_auth`), or one exchanged for the caller's (`token_exchange`).
async fn credential(shared: &Shared, cx: &CallContext) -> Result<CallerCredential, AdapterError> {
    if let Some(c) = CallerCredential::of_user(cx) {
        return Ok(c);
    }
    let exchange = match &shared.transport {
        Transport::Http(http) => http.exchange(),
        Transport::Stdio(_) => None,
    };
    match exchange {
        Some(x) => crate::relay::caller_credential(x, cx)
            .await?
            .map_err(|e| AdapterError::Backend(format!("no upstream credential for this caller: {e}"))),
        None => Err(AdapterError::UserTokenRefused),
    }
}
