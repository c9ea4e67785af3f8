//! The task book of this replica (MCP tasks extension): creating, reading, answering and
//! cancelling task records in the store, the cancellation tokens of the jobs running here,
//! and the end of a round written back. Running a round is [`crate::tasks`]' job.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::tasks::{Task, TaskStatus};
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::clock::now_ms;
use crate::cluster::task_store::{Continuation, TaskRecord, TaskStore};
use crate::config::TasksConfig;
use crate::rpc::RpcError;

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

impl Tasks {
    /// A book over `store`.
    pub fn new(store: Arc<dyn TaskStore>, config: TasksConfig) -> Self {
        Self { store, config, running: Mutex::default(), rng: SystemRandom::new() }
    }

    /// Lifetime of a task (also the deadline of each of its rounds).
    pub fn ttl(&self) -> Duration {
        self.config.ttl
    }

    /// Creates a working task for `tool`; returns it and what its first round runs.
    pub async fn create(
        &self,
        tool: &str,
        arguments: Value,
        capabilities: Value,
        owner: Option<String>,
    ) -> Result<(Task, Continuation), RpcError> {
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
            tool: tool.to_owned(),
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
        Ok((task, continuation))
    }

    /// The task for `tasks/get` (`-32602` when unknown, expired or someone else's).
    pub async fn get(&self, id: &str, owner: Option<&str>) -> Result<Task, RpcError> {
        Ok(self.load_owned(id, owner).await?.0.task)
    }

    /// `tasks/update`: records answers to outstanding input requests (ignoring other keys).
    /// When none is left, returns what the next round runs. Applied before the ack (MCP tasks extension § Methods).
    pub async fn answer(
        &self,
        id: &str,
        responses: Map<String, Value>,
        owner: Option<&str>,
    ) -> Result<Option<Continuation>, RpcError> {
        loop {
            let (mut record, version) = self.load_owned(id, owner).await?;
            if record.task.status != TaskStatus::InputRequired {
                return Ok(None);
            }
            let Some(mut cont) = record.continuation.take() else { return Ok(None) };
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
                return Ok(None);
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
                return Ok(resume.then_some(cont));
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

    /// A job for task `id` starts on this replica: the token that stops it.
    pub fn track(&self, id: &str) -> CancellationToken {
        let cancel = CancellationToken::new();
        self.running.lock().expect("running lock").insert(id.to_owned(), cancel.clone());
        cancel
    }

    /// The job for task `id` is over.
    pub fn untrack(&self, id: &str) {
        self.running.lock().expect("running lock").remove(id);
    }

    /// Resolves when the task was cancelled: locally (token) or on another replica (store).
    pub async fn cancelled(&self, id: &str, token: &CancellationToken) {
        loop {
            tokio::select! {
                () = token.cancelled() => return,
                () = tokio::time::sleep(CANCEL_POLL) => {}
            }
            if let Ok(Some((r, _))) = self.store.load(id).await
                && r.task.status == TaskStatus::Cancelled
            {
                token.cancel();
                return;
            }
        }
    }

    /// Applies a round's end to the record unless the task already ended (e.g. cancelled).
    pub async fn finish_round(&self, id: &str, apply: impl Fn(&mut TaskRecord)) {
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

    fn new_id(&self) -> String {
        let mut bytes = [0u8; 16];
        self.rng.fill(&mut bytes).expect("system randomness");
        format!("tsk_{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// RFC 3339 UTC with milliseconds.
fn iso(unix_ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + Duration::from_millis(unix_ms)).to_string()
}
