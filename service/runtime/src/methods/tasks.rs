//! `tasks/get`, `tasks/update`, `tasks/cancel` (MCP tasks extension § Methods): thin wrappers over the task
//! manager ([`crate::tasks`]). Each needs the extension declared on *this* request
//! (`-32021` otherwise, before any lookup), and `Mcp-Name` = `params.taskId` (checked inbound).

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use mcp_protocol::capabilities::covers;
use mcp_protocol::meta::TASKS_EXTENSION;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Ctx, required_str};
use crate::http::reply;
use crate::rpc::RpcError;
use crate::rpc::response::{self, ResultObject, ResultType};
use crate::tasks::JobContext;

/// The capability object naming the tasks extension.
pub fn extension() -> Value {
    json!({ "extensions": { (TASKS_EXTENSION): {} } })
}

/// `-32021` unless the request declared the tasks extension.
pub fn require_extension(ctx: &Ctx<'_>, what: &str) -> Result<(), RpcError> {
    let need = extension();
    if covers(&ctx.envelope.client_capabilities, &need) {
        Ok(())
    } else {
        Err(RpcError::missing_capability(
            format!(
                "Missing required client capability: {what} needs the {TASKS_EXTENSION} extension declared in _meta clientCapabilities.extensions"
            ),
            need,
        ))
    }
}

/// The task context for jobs started or resumed by this request.
pub fn job(ctx: &Ctx<'_>) -> JobContext {
    JobContext { tasks: Arc::clone(&ctx.state.tasks), registry: Arc::clone(&ctx.registry) }
}

fn ok<B: Serialize>(ctx: &Ctx<'_>, body: &B) -> Response {
    reply::json(
        StatusCode::OK,
        response::success(ctx.id, &ResultObject::new(ResultType::Complete, body, &ctx.registry.server_info)),
    )
}

pub async fn get(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Response, RpcError> {
    require_extension(ctx, "tasks/get")?;
    let id = required_str(params, "taskId", "tasks/get")?;
    let task = ctx.state.tasks.get(id, ctx.principal()).await?;
    Ok(ok(ctx, &task))
}

pub async fn update(ctx: &Ctx<'_>, mut params: Map<String, Value>) -> Result<Response, RpcError> {
    require_extension(ctx, "tasks/update")?;
    let id = required_str(&params, "taskId", "tasks/update")?.to_owned();
    let Some(Value::Object(responses)) = params.remove("inputResponses") else {
        return Err(RpcError::invalid_params("Invalid params: tasks/update needs inputResponses as an object"));
    };
    ctx.state.tasks.update(&job(ctx), &id, responses, ctx.principal()).await?;
    Ok(ok(ctx, &Map::new()))
}

pub async fn cancel(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Response, RpcError> {
    require_extension(ctx, "tasks/cancel")?;
    let id = required_str(params, "taskId", "tasks/cancel")?;
    ctx.state.tasks.cancel(id, ctx.principal()).await?;
    Ok(ok(ctx, &Map::new()))
}
