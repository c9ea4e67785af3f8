//! `tasks/get`, `tasks/update`, `tasks/cancel` (MCP tasks extension § Methods): thin wrappers over the task
//! book ([`crate::state::tasks`]) and its rounds ([`crate::tasks`]). Each needs the extension
//! declared on *this* request (`-32021` otherwise, before any lookup), and `Mcp-Name` =
//! `params.taskId` (checked inbound).

use serde::Serialize;
use serde_json::{Map, Value};

use super::required_str;
use crate::pipeline::Ctx;
use crate::rpc::response::{self, ResultObject, ResultType};
use crate::rpc::{Reply, RpcError};
use crate::tasks::{self, require_extension};

fn ok<B: Serialize>(ctx: &Ctx<'_>, body: &B) -> Reply {
    Reply::ok(response::success(ctx.id, &ResultObject::new(ResultType::Complete, body, &ctx.registry.server_info)))
}

pub async fn get(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    require_extension(&ctx.envelope, "tasks/get")?;
    let id = required_str(params, "taskId", "tasks/get")?;
    let task = ctx.state.tasks.get(id, ctx.task_owner().as_deref()).await?;
    Ok(ok(ctx, &task))
}

pub async fn update(ctx: &Ctx<'_>, mut params: Map<String, Value>) -> Result<Reply, RpcError> {
    require_extension(&ctx.envelope, "tasks/update")?;
    let id = required_str(&params, "taskId", "tasks/update")?.to_owned();
    let Some(Value::Object(responses)) = params.remove("inputResponses") else {
        return Err(RpcError::invalid_params("Invalid params: tasks/update needs inputResponses as an object"));
    };
    tasks::update(&tasks::job(ctx), &id, responses, ctx.task_owner().as_deref()).await?;
    Ok(ok(ctx, &Map::new()))
}

pub async fn cancel(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    require_extension(&ctx.envelope, "tasks/cancel")?;
    let id = required_str(params, "taskId", "tasks/cancel")?;
    ctx.state.tasks.cancel(id, ctx.task_owner().as_deref()).await?;
    Ok(ok(ctx, &Map::new()))
}
