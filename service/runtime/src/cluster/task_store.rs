//! Where tasks live (MCP tasks extension): a store behind a trait, so one replica can keep them
//! in memory and a cluster can share them in Redis. Writes are optimistic: `replace` succeeds
//! only if nobody changed the record since it was loaded, which is all a store has to make
//! atomic.
//!
//! In Redis a task created on one replica is visible from all (MCP tasks extension § Negotiation and task creation: durably
//! created before `CreateTaskResult`). Each task is a hash `{v: version, r: record}` with the
//! task's TTL; `replace` is a compare-and-set script on `v`. While Redis is unavailable, new
//! tasks live in this replica's memory (and are found there) instead of failing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mcp_protocol::tasks::Task;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::redis::Redis;
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

const REPLACE: &str = r"
if redis.call('HGET', KEYS[1], 'v') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'v', tostring(tonumber(ARGV[1]) + 1), 'r', ARGV[2])
  return 1
end
return 0
";

/// Redis first, this replica's memory as the fallback.
#[derive(Debug)]
pub struct RedisTaskStore {
    redis: Arc<Redis>,
    fallback: MemoryStore,
    replace: redis::Script,
}

impl RedisTaskStore {
    /// A store over `redis`.
    pub fn new(redis: Arc<Redis>) -> Self {
        Self { redis, fallback: MemoryStore::default(), replace: redis::Script::new(REPLACE) }
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }
}

fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    serde_json::to_string(record).map_err(|e| StoreError(e.to_string()))
}

#[async_trait]
impl TaskStore for RedisTaskStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let key = self.key(&record.task.task_id);
        let json = encode(record)?;
        let ttl_ms = record.expires_at_ms.map_or(0, |t| t.saturating_sub(now_ms()).max(1));
        let stored = self
            .redis
            .call(|mut con| async move {
                let mut pipe = redis::pipe();
                pipe.atomic().hset_multiple(&key, &[("v", "0"), ("r", json.as_str())]);
                if ttl_ms > 0 {
                    pipe.pexpire(&key, i64::try_from(ttl_ms).unwrap_or(i64::MAX));
                }
                pipe.query_async::<()>(&mut con).await
            })
            .await;
        match stored {
            Ok(()) => Ok(()),
            Err(_) => self.fallback.create(record).await,
        }
    }

    async fn load(&self, id: &str) -> Result<Option<(TaskRecord, u64)>, StoreError> {
        if let Some(found) = self.fallback.load(id).await? {
            return Ok(Some(found));
        }
        let key = self.key(id);
        let got = self
            .redis
            .call(|mut con| async move {
                redis::cmd("HMGET")
                    .arg(&key)
                    .arg("v")
                    .arg("r")
                    .query_async::<(Option<u64>, Option<String>)>(&mut con)
                    .await
            })
            .await;
        match got {
            Ok((Some(v), Some(json))) => {
                let record: TaskRecord = serde_json::from_str(&json).map_err(|e| StoreError(e.to_string()))?;
                Ok(Some((record, v)))
            }
            Ok(_) => Ok(None),
            Err(_) => {
                Err(StoreError("redis is unavailable; tasks created on other replicas cannot be read now".into()))
            }
        }
    }

    async fn replace(&self, id: &str, version: u64, record: &TaskRecord) -> Result<bool, StoreError> {
        if self.fallback.load(id).await?.is_some() {
            return self.fallback.replace(id, version, record).await;
        }
        let mut invocation = self.replace.prepare_invoke();
        invocation.key(self.key(id)).arg(version.to_string()).arg(encode(record)?);
        self.redis
            .call(|mut con| async move { invocation.invoke_async::<i64>(&mut con).await })
            .await
            .map(|n| n == 1)
            .map_err(|_| StoreError("redis is unavailable; the task cannot be updated now".into()))
    }
}
