//! Tasks in Redis, so a task created on one replica is visible from all (MCP tasks extension § Negotiation and task creation: durably
//! created before `CreateTaskResult`). Each task is a hash `{v: version, r: record}` with the
//! task's TTL; `replace` is a compare-and-set script on `v`. While Redis is unavailable, new
//! tasks live in this replica's memory (and are found there) instead of failing.

use std::sync::Arc;

use async_trait::async_trait;

use super::redis::Redis;
use crate::clock::now_ms;
use crate::tasks::{MemoryStore, StoreError, TaskRecord, TaskStore};

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
