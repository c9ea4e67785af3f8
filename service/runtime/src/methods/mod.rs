//! The MCP methods of revision 2026-07-28, one module per method, each answering a
//! transport-neutral [`Reply`]. `server/discover` is a pre-rendered result served inline; the
//! four list methods share `list` (they differ only in which pre-rendered pages they serve);
//! the three call methods check their params and hand over to the call pipeline
//! ([`crate::pipeline`]); the three thin `tasks/*` methods over the task book share `tasks`;
//! the skills extension's `skills/list` is a list, `skills/get` and
//! `resources/directory/read` are in `skills`.

mod complete;
mod list;
mod listen;
mod per_caller;
mod prompts_get;
mod resources_read;
mod search;
mod skills;
mod tasks;
mod tools_call;

pub use listen::refused as stream_refused;
pub use search::unwrap_call;

use std::sync::Arc;
use std::time::Instant;

use axum::http::HeaderMap;
use mcp_adapter_api::Identity;
use tracing::Instrument as _;

use crate::pipeline::Ctx;
use crate::registry::Registry;
use crate::rpc::{Method, Reply, Request, RpcError, response};
use crate::state::AppState;
use crate::telemetry::request::Scope;

/// Runs the method inside the request's span; errors become JSON-RPC errors echoing the id.
pub async fn dispatch(
    state: &Arc<AppState>,
    registry: Arc<Registry>,
    headers: &HeaderMap,
    req: Box<Request>,
    identity: Option<Identity>,
    arrived: Instant,
) -> Reply {
    let scope = Scope::start(
        &state.metrics,
        state.telemetry,
        &registry,
        &req,
        headers,
        identity.as_ref(),
        state.records.get(),
        arrived,
    );
    // Boxed until here, so this future does not hold the request twice.
    let Request { id, method, params, envelope, accepts } = *req;
    let span = scope.span().clone();
    let ctx = Ctx { state, registry, headers, id: &id, envelope, accepts, scope: scope.clone(), identity };
    // The context is held here once and lent below: every future between here and the
    // adapter is moved as it is built, and each copy of it would be moved along.
    let result = run(&ctx, method, params).instrument(span).await;
    drop(ctx);
    result.unwrap_or_else(|e: RpcError| {
        scope.failed(&e);
        Reply::Error(Some(id), e)
    })
}

async fn run(
    ctx: &Ctx<'_>,
    method: Method,
    params: serde_json::Map<String, serde_json::Value>,
) -> Result<Reply, RpcError> {
    let id = ctx.id;
    match method {
        Method::Discover => Ok(Reply::ok(response::success(id, &*ctx.registry.discover))),
        Method::ToolsList => per_caller::tools_list(ctx, &params).await,
        Method::ResourcesList => list::handle(ctx, &params, Registry::resources_page, "resources"),
        Method::ResourceTemplatesList => list::handle(ctx, &params, Registry::templates_page, "resourceTemplates"),
        Method::PromptsList => list::handle(ctx, &params, Registry::prompts_page, "prompts"),
        Method::ToolsCall => tools_call::handle(ctx, params).await,
        Method::ResourcesRead => resources_read::handle(ctx, params).await,
        Method::PromptsGet => prompts_get::handle(ctx, params).await,
        Method::Complete => complete::handle(ctx, &params).await,
        Method::Listen => listen::handle(ctx, &params),
        Method::TasksGet => tasks::get(ctx, &params).await,
        Method::TasksUpdate => tasks::update(ctx, params).await,
        Method::TasksCancel => tasks::cancel(ctx, &params).await,
        Method::SkillsList => list::handle(ctx, &params, Registry::skills_page, "skills"),
        Method::SkillsGet => skills::get(ctx, &params),
        Method::DirectoryRead => skills::directory_read(ctx, &params),
    }
}

/// A required string param, or `-32602` naming it.
pub fn required_str<'p>(
    params: &'p serde_json::Map<String, serde_json::Value>,
    key: &str,
    method: &str,
) -> Result<&'p str, RpcError> {
    params
        .get(key)
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("Invalid params: {method} needs params.{key} as a string")))
}
