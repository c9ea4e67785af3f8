//! `resources/read` (MCP 2026-07-28 server/resources): route the URI to the adapter that lists it or whose template
//! matches; unknown URIs are `-32602` with `data.uri`, never empty contents.

use std::time::Duration;

use mcp_protocol::{CacheHint, CacheScope};
use serde_json::{Map, Value, json};

use super::required_str;
use crate::pipeline::{self, Ctx, Plan, Resource};
use crate::rpc::{Reply, RpcError};

const METHOD: &str = "resources/read";

pub async fn handle(ctx: &Ctx<'_>, mut params: Map<String, Value>) -> Result<Reply, RpcError> {
    let uri = required_str(&params, "uri", METHOD)?.to_owned();
    let (adapter, vars) = ctx
        .registry
        .resource(&uri)
        .map(|(a, vars)| (a.clone(), vars))
        .ok_or_else(|| RpcError::invalid_params("Resource not found").with_data(json!({ "uri": uri })))?;
    let binding = ctx.binding(METHOD, &uri, &Value::Null);
    let input = pipeline::input(ctx, &mut params, &binding)?;
    // Results of MRTR retries are never cached (MCP 2026-07-28 basic/patterns/mrtr, our choice where the spec leaves it open).
    let hint = if input.responses.is_some() || input.state.is_some() {
        CacheHint::UNCACHEABLE
    } else {
        ctx.registry.caching.resources_read
    };
    // Reads are cached for the same TTL the client is told (MCP 2026-07-28 server/utilities/caching); a private one per caller.
    let cache = (hint.ttl_ms > 0).then(|| {
        let caller = if hint.cache_scope == CacheScope::Private { ctx.principal().unwrap_or("") } else { "" };
        (format!("resources/read\u{0}{uri}\u{0}{caller}"), Duration::from_millis(hint.ttl_ms))
    });
    let plan = Plan {
        responses: input.responses,
        state: input.state,
        runtime: None,
        cache,
        timeout: ctx.registry.call_timeout,
        began: None,
    };
    pipeline::invoke(ctx, Resource { adapter, uri, vars, hint }, plan).await
}
