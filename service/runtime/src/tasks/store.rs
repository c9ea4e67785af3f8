//! Where tasks live: a store behind a trait, so one replica can keep them in memory and a
//! cluster can share them (Redis). Writes are optimistic: `replace` succeeds only if nobody
//! changed the record since it was loaded, which is all a store has to make atomic.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::Mutex;

use async_trait::async_trait;
use mcp_protocol::tasks::Task;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock::now_ms;

/// A task and what the runtime needs to continue it on any replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task as `tasks/get` shows it.
    pub task: Task,
    /// Subject of the caller that created it; only that caller may see or change it.
    pub owner: Option<String>,
    /// Unix milliseconds after which the task is gone (`None`: kept until purged).
    pub expires_at_ms: Option<u64>,
    /// How to run the next round, while the task waits for input.
    pub continuation: Option<Continuation>,
}

/// The call behind a task, and its MRTR progress (MCP tasks extension § Methods: input during a task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Continuation {
    /// The tool.
    pub tool: String,
    /// Its (validated) arguments.
    pub arguments: Value,
    /// The creating request's client capabilities.
    pub capabilities: Value,
    /// The authenticated caller who created the task.
    pub subject: Option<String>,
    /// The adapter's state from its last input request.
    pub adapter_state: Option<Value>,
    /// Outstanding input requests: wire key → the adapter's key.
    pub outstanding: BTreeMap<String, String>,
    /// Answers gathered so far, by the adapter's key.
    pub answers: Map<String, Value>,
    /// Every wire key used so far; keys are never reused in a task's life (MCP tasks extension § Methods).
    pub used_keys: BTreeSet<String>,
}

/// A store failure (network, serialization): the request fails with `-32603`.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

/// Task persistence.
#[async_trait]
pub trait TaskStore: Send + Sync + Debug {
    /// Stores a new record; visible to every replica when this returns (MCP tasks extension § Negotiation and task creation: durably
    /// created before `CreateTaskResult`).
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError>;
    /// The record and its version, unless unknown or expired.
    async fn load(&self, id: &str) -> Result<Option<(TaskRecord, u64)>, StoreError>;
    /// Replaces the record if it is still at `version`; `false` when it changed meanwhile.
    async fn replace(&self, id: &str, version: u64, record: &TaskRecord) -> Result<bool, StoreError>;
}

/// The in-process store: one replica's tasks (the default without Redis).
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: Mutex<HashMap<String, (TaskRecord, u64)>>,
}

impl MemoryStore {
    fn purge_expired(records: &mut HashMap<String, (TaskRecord, u64)>) {
        let now = now_ms();
        records.retain(|_, (r, _)| r.expires_at_ms.is_none_or(|t| t > now));
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let mut records = self.records.lock().expect("task store lock");
        Self::purge_expired(&mut records);
        records.insert(record.task.task_id.clone(), (record.clone(), 0));
        Ok(())
    }

    async fn load(&self, id: &str) -> Result<Option<(TaskRecord, u64)>, StoreError> {
        let records = self.records.lock().expect("task store lock");
        Ok(records.get(id).filter(|(r, _)| r.expires_at_ms.is_none_or(|t| t > now_ms())).cloned())
    }

    async fn replace(&self, id: &str, version: u64, record: &TaskRecord) -> Result<bool, StoreError> {
        let mut records = self.records.lock().expect("task store lock");
        match records.get_mut(id) {
            Some(slot) if slot.1 == version => {
                *slot = (record.clone(), version + 1);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
