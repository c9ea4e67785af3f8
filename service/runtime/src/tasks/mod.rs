//! The tasks extension (`io.modelcontextprotocol/tasks`, MCP tasks extension): tool calls that run in
//! the background and are polled with `tasks/get`, fed with `tasks/update`, stopped with
//! `tasks/cancel`.
//!
//! Each execution round is a background job on the replica that started it, running the
//! tool through the call pipeline ([`pipeline::execute`]); everything a later round needs
//! (arguments, capabilities, adapter state, gathered answers) is in the store, so whichever
//! replica receives the `tasks/update` that completes the answers runs the next round.
//! Cancellation marks the record; the running job sees it (directly on its own replica, by
//! polling the store elsewhere) and stops. The records themselves are kept by the task book
//! ([`crate::state::tasks`]) in the store ([`crate::cluster::task_store`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_adapter_api::{CallContext, Input, InputRequired, Outcome};
use mcp_protocol::capabilities::covers;
use mcp_protocol::meta::TASKS_EXTENSION;
use mcp_protocol::tasks::{Task, TaskStatus};
use mcp_protocol::{CallToolResult, ErrorObject};
use serde_json::{Map, Value, json};

use crate::cluster::task_store::{Continuation, TaskRecord};
use crate::pipeline::{self, Ctx, Tool};
use crate::registry::{Registry, ToolEntry};
use crate::rpc::error::{Failure, from_adapter};
use crate::rpc::response::{ResultObject, ResultType, ServerInfo};
use crate::rpc::{Envelope, RpcError};
use crate::state::tasks::Tasks;

/// What a job needs from the rest of the runtime.
#[derive(Clone)]
pub struct JobContext {
    /// The task book.
    pub tasks: Arc<Tasks>,
    /// The registry the task started on (in-flight work finishes on it).
    pub registry: Arc<Registry>,
    /// Callers' upstream connections, for tools whose adapter has `user_auth`.
    pub user_auth: Option<Arc<pipeline::UserAuth>>,
}

/// The task context for jobs started or resumed by this request.
pub fn job(ctx: &Ctx<'_>) -> JobContext {
    JobContext {
        tasks: Arc::clone(&ctx.state.tasks),
        registry: Arc::clone(&ctx.registry),
        user_auth: pipeline::UserAuth::of(ctx.state).map(Arc::new),
    }
}

/// `-32021` unless the request declared the tasks extension (MCP tasks extension § Negotiation and task creation).
pub fn require_extension(envelope: &Envelope, what: &str) -> Result<(), RpcError> {
    let need = json!({ "extensions": { (TASKS_EXTENSION): {} } });
    if covers(&envelope.client_capabilities, &need) {
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

/// Creates a task for `tool` and starts its first round; returns the created task.
pub async fn start(
    job: &JobContext,
    tool: &Arc<ToolEntry>,
    arguments: Value,
    capabilities: Value,
    owner: Option<String>,
) -> Result<Task, RpcError> {
    let (task, continuation) = job.tasks.create(&tool.tool.name, arguments, capabilities, owner).await?;
    spawn_round(job.clone(), Arc::clone(tool), task.task_id.clone(), continuation);
    Ok(task)
}

/// `tasks/update`: records the answers, and when none is outstanding, runs the next round.
pub async fn update(
    job: &JobContext,
    id: &str,
    responses: Map<String, Value>,
    owner: Option<&str>,
) -> Result<(), RpcError> {
    if let Some(cont) = job.tasks.answer(id, responses, owner).await? {
        let tool =
            job.registry.tool(&cont.tool).cloned().ok_or_else(|| {
                RpcError::internal(&format!("task {id}: tool '{}' is no longer configured", cont.tool))
            })?;
        spawn_round(job.clone(), tool, id.to_owned(), cont);
    }
    Ok(())
}

/// Runs one round of a task in the background.
fn spawn_round(job: JobContext, tool: Arc<ToolEntry>, id: String, cont: Continuation) {
    tokio::spawn(async move {
        let tasks = &job.tasks;
        let cancel = tasks.track(&id);
        let budget = tasks.ttl();
        let mut cx = CallContext {
            deadline: tokio::time::Instant::now() + budget,
            cancel: cancel.clone(),
            identity: cont.subject.as_deref().map(mcp_adapter_api::Identity::new),
            client_capabilities: cont.capabilities.clone(),
            notifier: mcp_adapter_api::Notifier::default(),
            propagation: Vec::new(),
            span: tracing::info_span!("mcp.task", "mcp.task.id" = %id, "gen_ai.tool.name" = %tool.tool.name),
            user_token: None,
        };
        let effective = Value::Object(cont.arguments.as_object().cloned().unwrap_or_default());
        // A round binds no sealed state: its input is in the store.
        let target = Tool { entry: tool, arguments: Value::Null, effective: Some(effective) };
        let answers = (!cont.answers.is_empty()).then_some(&cont.answers);
        let input = Input { responses: answers, state: cont.adapter_state.as_ref() };
        let outcome = tokio::select! {
            outcome = pipeline::execute(&target, input, &mut cx, job.user_auth.as_deref(), budget) => Some(outcome),
            () = tasks.cancelled(&id, &cancel) => None,
        };
        tasks.untrack(&id);
        let Some(outcome) = outcome else { return };
        let info = &job.registry.server_info;
        match outcome {
            Ok(Outcome::Complete(result)) => tasks.finish_round(&id, |r| complete(r, &result, info)).await,
            // Only state, no questions ("call me again", MCP 2026-07-28 basic/patterns/mrtr § InputRequiredResult): run the next round now.
            Ok(Outcome::InputRequired(required)) if required.requests.is_empty() => {
                spawn_round(
                    job.clone(),
                    target.entry,
                    id,
                    Continuation { adapter_state: required.state, answers: Map::new(), ..cont },
                );
            }
            Ok(Outcome::InputRequired(required)) => tasks.finish_round(&id, |r| ask(r, &required, &cont)).await,
            Err(e) => match from_adapter(e, true, Some(&target.entry.adapter_name)) {
                Failure::ToolError(result) => tasks.finish_round(&id, |r| complete(r, &result, info)).await,
                Failure::Rpc(err) => tasks.finish_round(&id, |r| fail(r, err.to_object())).await,
            },
        }
    });
}

fn complete(record: &mut TaskRecord, result: &CallToolResult, info: &ServerInfo) {
    let mut result = result.clone();
    let meta = result.meta.take();
    let rendered = ResultObject::new(ResultType::Complete, &result, info).with_meta(meta.as_ref());
    record.task.status = TaskStatus::Completed;
    record.task.result = Some(serde_json::to_value(&rendered).expect("serializable result"));
    record.continuation = None;
}

fn fail(record: &mut TaskRecord, error: ErrorObject) {
    record.task.status = TaskStatus::Failed;
    record.task.status_message = Some(error.message.clone());
    record.task.error = Some(error);
    record.continuation = None;
}

/// The adapter needs input while the task runs: publish the requests under keys never used
/// before in this task, and keep what the next round needs (MCP tasks extension § Methods).
fn ask(record: &mut TaskRecord, required: &InputRequired, cont: &Continuation) {
    if let Some(missing) = required.requests.values().find(|r| !r.is_supported_by(&cont.capabilities)) {
        let need = missing.required_capability();
        fail(
            record,
            RpcError::missing_capability(
                format!("Missing required client capability: the task needs {need} to ask for input"),
                need,
            )
            .to_object(),
        );
        return;
    }
    let mut next = cont.clone();
    next.adapter_state = required.state.clone();
    next.answers = Map::new();
    next.outstanding = BTreeMap::new();
    let mut wire_requests = Map::new();
    for (key, request) in &required.requests {
        let mut wire = key.clone();
        let mut n = 2;
        while next.used_keys.contains(&wire) {
            wire = format!("{key}.{n}");
            n += 1;
        }
        next.used_keys.insert(wire.clone());
        next.outstanding.insert(wire.clone(), key.clone());
        wire_requests.insert(wire, serde_json::to_value(request).expect("serializable request"));
    }
    record.task.status = TaskStatus::InputRequired;
    record.task.input_requests = Some(wire_requests);
    record.continuation = Some(next);
}
