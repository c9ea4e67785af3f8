//! The tasks extension (`io.modelcontextprotocol/tasks`, MCP tasks extension): tool calls that run in
//! the background and are polled with `tasks/get`, fed with `tasks/update`, stopped with
//! `tasks/cancel`.
//!
//! Each execution round is a background job on the replica that started it; everything a
//! later round needs (arguments, capabilities, adapter state, gathered answers) is in the
//! store, so whichever replica receives the `tasks/update` that completes the answers runs
//! the next round. Cancellation marks the record; the running job sees it (directly on its own
//! replica, by polling the store elsewhere) and stops.
//!
//! - [`store`]: the `TaskStore` trait and the in-memory store.

pub mod store;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_adapter_api::{CallContext, Input, InputRequired, Outcome, ToolCall};
use mcp_protocol::tasks::{Task, TaskStatus};
use mcp_protocol::{CallToolResult, ErrorObject};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::clock::now_ms;
use crate::config::TasksConfig;
use crate::methods::invoke;
use crate::registry::{Registry, ToolEntry};
use crate::rpc::RpcError;
use crate::rpc::error::{Failure, from_adapter};
use crate::rpc::response::{ResultObject, ResultType};
pub use store::{Continuation, MemoryStore, StoreError, TaskRecord, TaskStore};

/// How often a job checks the store for a cancellation made on another replica.
const CANCEL_POLL: Duration = Duration::from_millis(500);

/// The tasks of this replica's store, and the jobs running here.
#[derive(Debug)]
pub struct Tasks {
    store: Arc<dyn TaskStore>,
    config: TasksConfig,
    running: Mutex<HashMap<String, CancellationToken>>,
    rng: SystemRandom,
}

/// What a job needs from the rest of the runtime.
#[derive(Clone)]
pub struct JobContext {
    /// The task manager.
    pub tasks: Arc<Tasks>,
    /// The registry the task started on (in-flight work finishes on it).
    pub registry: Arc<Registry>,
}

impl Tasks {
    /// A manager over `store`.
    pub fn new(store: Arc<dyn TaskStore>, config: TasksConfig) -> Self {
        Self { store, config, running: Mutex::default(), rng: SystemRandom::new() }
    }

    /// Creates a task for `tool` and starts its first round; returns the created task.
    pub async fn start(
        &self,
        job: &JobContext,
        tool: &Arc<ToolEntry>,
        arguments: Value,
        capabilities: Value,
        owner: Option<String>,
    ) -> Result<Task, RpcError> {
        let now = now_ms();
        let stamp = iso(now);
        let task = Task {
            task_id: self.new_id(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: stamp.clone(),
            last_updated_at: stamp,
            ttl_ms: Some(millis(self.config.ttl)),
            poll_interval_ms: Some(millis(self.config.poll_interval)),
            input_requests: None,
            result: None,
            error: None,
        };
        let continuation = Continuation {
            tool: tool.tool.name.clone(),
            arguments,
            capabilities,
            subject: owner.clone(),
            adapter_state: None,
            outstanding: BTreeMap::new(),
            answers: Map::new(),
            used_keys: BTreeSet::new(),
        };
        let record = TaskRecord {
            task: task.clone(),
            owner,
            expires_at_ms: Some(now + millis(self.config.ttl)),
            continuation: None,
        };
        self.store.create(&record).await.map_err(|e| RpcError::internal(&e.to_string()))?;
        spawn_round(job.clone(), Arc::clone(tool), task.task_id.clone(), continuation);
        Ok(task)
    }

    /// The task for `tasks/get` (`-32602` when unknown, expired or someone else's).
    pub async fn get(&self, id: &str, owner: Option<&str>) -> Result<Task, RpcError> {
        Ok(self.load_owned(id, owner).await?.0.task)
    }

    /// `tasks/update`: records answers to outstanding input requests (ignoring other keys),
    /// and when none is left, runs the next round. Applied before the ack (MCP tasks extension § Methods).
    pub async fn update(
        &self,
        job: &JobContext,
        id: &str,
        responses: Map<String, Value>,
        owner: Option<&str>,
    ) -> Result<(), RpcError> {
        loop {
            let (mut record, version) = self.load_owned(id, owner).await?;
            if record.task.status != TaskStatus::InputRequired {
                return Ok(());
            }
            let Some(mut cont) = record.continuation.take() else { return Ok(()) };
            let mut changed = false;
            for (wire, value) in &responses {
                if let Some(key) = cont.outstanding.remove(wire) {
                    cont.answers.insert(key, value.clone());
                    if let Some(requests) = record.task.input_requests.as_mut() {
                        requests.remove(wire);
                    }
                    changed = true;
                }
            }
            if !changed {
                return Ok(());
            }
            let resume = cont.outstanding.is_empty();
            if resume {
                record.task.status = TaskStatus::Working;
                record.task.input_requests = None;
            } else {
                record.continuation = Some(cont.clone());
            }
            record.task.last_updated_at = iso(now_ms());
            if self.store.replace(id, version, &record).await.map_err(|e| RpcError::internal(&e.to_string()))? {
                if resume {
                    let tool = job.registry.tool(&cont.tool).cloned().ok_or_else(|| {
                        RpcError::internal(&format!("task {id}: tool '{}' is no longer configured", cont.tool))
                    })?;
                    spawn_round(job.clone(), tool, id.to_owned(), cont);
                }
                return Ok(());
            }
        }
    }

    /// `tasks/cancel`: a terminal task stays as it is (the ack is idempotent); otherwise it
    /// becomes `cancelled` and its job is stopped.
    pub async fn cancel(&self, id: &str, owner: Option<&str>) -> Result<(), RpcError> {
        loop {
            let (mut record, version) = self.load_owned(id, owner).await?;
            if record.task.status.is_terminal() {
                return Ok(());
            }
            record.task.status = TaskStatus::Cancelled;
            record.task.status_message = Some("Cancelled by the client".into());
            record.task.input_requests = None;
            record.continuation = None;
            record.task.last_updated_at = iso(now_ms());
            if self.store.replace(id, version, &record).await.map_err(|e| RpcError::internal(&e.to_string()))? {
                if let Some(token) = self.running.lock().expect("running lock").get(id) {
                    token.cancel();
                }
                return Ok(());
            }
        }
    }

    async fn load_owned(&self, id: &str, owner: Option<&str>) -> Result<(TaskRecord, u64), RpcError> {
        let found = self.store.load(id).await.map_err(|e| RpcError::internal(&e.to_string()))?;
        match found {
            // Someone else's task looks exactly like an unknown one.
            Some((r, v)) if r.owner.as_deref() == owner => Ok((r, v)),
            _ => {
                Err(RpcError::invalid_params(format!("Unknown or expired task: {id}"))
                    .with_data(json!({ "taskId": id })))
            }
        }
    }

    /// Applies a round's end to the record unless the task already ended (e.g. cancelled).
    async fn finish_round(&self, id: &str, apply: impl Fn(&mut TaskRecord)) {
        loop {
            let Ok(Some((mut record, version))) = self.store.load(id).await else { return };
            if record.task.status.is_terminal() {
                return;
            }
            apply(&mut record);
            record.task.last_updated_at = iso(now_ms());
            match self.store.replace(id, version, &record).await {
                Ok(true) | Err(_) => return,
                Ok(false) => {}
            }
        }
    }

    fn new_id(&self) -> String {
        let mut bytes = [0u8; 16];
        self.rng.fill(&mut bytes).expect("system randomness");
        format!("tsk_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

/// Runs one round of a task in the background.
fn spawn_round(job: JobContext, tool: Arc<ToolEntry>, id: String, cont: Continuation) {
    tokio::spawn(async move {
        let tasks = &job.tasks;
        let cancel = CancellationToken::new();
        tasks.running.lock().expect("running lock").insert(id.clone(), cancel.clone());
        let cx = CallContext {
            deadline: tokio::time::Instant::now() + tasks.config.ttl,
            cancel: cancel.clone(),
            identity: cont.subject.as_deref().map(|s| mcp_adapter_api::Identity { subject: s.into() }),
            client_capabilities: cont.capabilities.clone(),
            notifier: mcp_adapter_api::Notifier::default(),
            propagation: Vec::new(),
            span: tracing::info_span!("mcp.task", "mcp.task.id" = %id, "gen_ai.tool.name" = %tool.tool.name),
        };
        let args = cont.arguments.as_object().cloned().unwrap_or_default();
        let answers = (!cont.answers.is_empty()).then_some(&cont.answers);
        let input = Input { responses: answers, state: cont.adapter_state.as_ref() };
        let call =
            invoke::run(&cx, tool.adapter.call_tool(ToolCall { name: &tool.tool.name, arguments: &args, input }, &cx));
        let outcome = tokio::select! {
            outcome = call => Some(outcome),
            () = cancelled_elsewhere(tasks, &id, &cancel) => None,
        };
        tasks.running.lock().expect("running lock").remove(&id);
        let Some(outcome) = outcome else { return };
        let info = &job.registry.server_info;
        match outcome {
            Ok(Outcome::Complete(mut result)) => {
                crate::methods::tools_call::check_output(&tool, &mut result);
                tasks.finish_round(&id, |r| complete(r, &result, info)).await;
            }
            // Only state, no questions ("call me again", MCP 2026-07-28 basic/patterns/mrtr § InputRequiredResult): run the next round now.
            Ok(Outcome::InputRequired(required)) if required.requests.is_empty() => {
                spawn_round(
                    job.clone(),
                    tool,
                    id,
                    Continuation { adapter_state: required.state, answers: Map::new(), ..cont },
                );
            }
            Ok(Outcome::InputRequired(required)) => tasks.finish_round(&id, |r| ask(r, &required, &cont)).await,
            Err(e) => match from_adapter(e, true) {
                Failure::ToolError(result) => tasks.finish_round(&id, |r| complete(r, &result, info)).await,
                Failure::Rpc(err) => tasks.finish_round(&id, |r| fail(r, err.to_object())).await,
            },
        }
    });
}

/// Resolves when the task was cancelled: locally (token) or on another replica (store).
async fn cancelled_elsewhere(tasks: &Tasks, id: &str, token: &CancellationToken) {
    loop {
        tokio::select! {
            () = token.cancelled() => return,
            () = tokio::time::sleep(CANCEL_POLL) => {}
        }
        if let Ok(Some((r, _))) = tasks.store.load(id).await
            && r.task.status == TaskStatus::Cancelled
        {
            token.cancel();
            return;
        }
    }
}

fn complete(record: &mut TaskRecord, result: &CallToolResult, info: &serde_json::value::RawValue) {
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

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// RFC 3339 UTC with milliseconds.
fn iso(unix_ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + Duration::from_millis(unix_ms)).to_string()
}
