//! Tools only a caller sees: those of an adapter that lists per caller (an `mcp` upstream
//! with `user_auth` or `token_exchange` and no service credential; `Adapter::caller_tools`),
//! fetched with the caller's own upstream token. `tools/list` shows them after the catalog's own tools, on its
//! last page, with `cacheScope: "private"` on every page (MCP 2026-07-28
//! server/utilities/caching: the list depends on the caller); a call of a name the catalog
//! lacks is looked up among them. A caller who has not connected sees none (the adapter's
//! connect tool is in the catalog). Only on the MCP endpoint itself, not on virtual endpoints
//! or with tool search.

use std::sync::Arc;

use mcp_adapter_api::{CallContext, CancellationToken, Notifier, ToolSpec};
use serde_json::{Map, Value};

use crate::pipeline::Ctx;
use crate::registry::{NamedAdapter, Registry, ToolEntry};
use crate::rpc::{Reply, RpcError, response};

/// The adapters whose tools depend on the caller, on this request's endpoint.
fn adapters(registry: &Registry) -> impl Iterator<Item = &NamedAdapter> {
    let here = registry.endpoint.is_none() && registry.search.is_none();
    registry.adapters().iter().filter(move |a| here && a.adapter.lists_per_caller())
}

/// `tools/list`: the catalog's page, and on the last one the caller's own tools.
pub async fn tools_list(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    if adapters(&ctx.registry).next().is_none() {
        return super::list::handle(ctx, params, Registry::tools_page, "tools");
    }
    let mut page = super::list::page(ctx, params, Registry::tools_page, "tools")?;
    if !page.contains_key("nextCursor") {
        let mut added = Vec::new();
        for a in adapters(&ctx.registry) {
            // Boxed: a large future (the upstream's `tools/list`), and only per-caller adapters
            // take it; inline, it would make every `tools/list` and `tools/call` larger.
            let tools = Box::pin(tools_of(ctx, a)).await;
            added.extend(tools.iter().filter_map(|t| serde_json::to_value(&t.tool).ok()));
        }
        super::list::filter(ctx, "tools", &mut added);
        if let Some(Value::Array(items)) = page.get_mut("tools") {
            items.extend(added);
        }
    }
    page.insert("cacheScope".into(), Value::from("private"));
    Ok(Reply::ok(response::success(ctx.id, &page)))
}

/// The entry of `name` among the caller's own tools, for `tools/call`.
pub async fn entry(ctx: &Ctx<'_>, name: &str) -> Option<Arc<ToolEntry>> {
    for a in adapters(&ctx.registry) {
        if let Some(spec) = tools_of(ctx, a).await.iter().find(|t| t.tool.name == name) {
            return ToolEntry::of_caller(spec, a, ctx.registry.config()).map(Arc::new);
        }
    }
    None
}

/// The caller's tools at `a`: none without a connection, or when the upstream did not answer
/// (logged; the catalog's connect tool stays listed).
async fn tools_of(ctx: &Ctx<'_>, a: &NamedAdapter) -> Arc<[ToolSpec]> {
    let none = || Arc::from([]);
    let Some(identity) = &ctx.identity else { return none() };
    // `user_auth`: the caller's stored token, once they connected; else the adapter exchanges
    // the caller's own (`token_exchange`).
    let token = match (&a.user_auth, &ctx.state.connections) {
        (Some(upstream), Some(connections)) => match connections.token(identity, upstream).await {
            Some(token) => Some(token),
            None => return none(),
        },
        (Some(_), None) => return none(),
        (None, _) => None,
    };
    let cx = CallContext {
        deadline: tokio::time::Instant::now() + ctx.registry.call_timeout,
        cancel: CancellationToken::new(),
        identity: ctx.identity.clone(),
        client_capabilities: ctx.envelope.client_capabilities.clone(),
        notifier: Notifier::default(),
        propagation: Vec::new(),
        span: tracing::Span::current(),
        user_token: token,
    };
    match tokio::time::timeout_at(cx.deadline, a.adapter.caller_tools(&cx)).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            tracing::info!(adapter = %a.name, caller = identity.key(), error = %e, "the caller's own tools were not listed");
            none()
        }
        Err(_) => {
            tracing::info!(adapter = %a.name, caller = identity.key(), "the caller's own tools were not listed in time");
            none()
        }
    }
}
