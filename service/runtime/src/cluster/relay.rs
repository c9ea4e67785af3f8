//! Routes a 2025-era client's answer (a JSON-RPC response POSTed to any replica) to the replica whose SSE stream asked: in-process, or over Redis pub/sub.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::redis::Redis;

/// Questions waiting on this replica, at most (each is one live call of a 2025-era client).
const MAX_PENDING: usize = 10_000;

/// Where an answer went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Handed to the waiting call on this replica.
    Delivered,
    /// Published to the replica that asked.
    Forwarded,
    /// No such question here (unknown id, answered already, or another session's): nothing changed.
    Unknown,
    /// Asked by another replica and there is no Redis to reach it.
    Unroutable,
}

/// The pending server-to-client requests of this replica and the route to the others.
#[derive(Debug)]
pub struct Relay {
    replica: String,
    redis: Option<Arc<Redis>>,
    pending: Mutex<HashMap<String, Waiting>>,
}

#[derive(Debug)]
struct Waiting {
    session: String,
    tx: oneshot::Sender<Value>,
}

/// One answer on the wire between replicas.
#[derive(Serialize, Deserialize)]
struct Wire {
    i: String,
    s: String,
    m: Value,
}

/// A question asked of the client: its JSON-RPC id and where its answer arrives; dropping it forgets the question.
#[derive(Debug)]
pub struct Question {
    /// The id of the server-to-client request.
    pub id: String,
    /// Resolves with the client's response message.
    pub answer: oneshot::Receiver<Value>,
    relay: Arc<Relay>,
}

impl Drop for Question {
    fn drop(&mut self) {
        self.relay.pending.lock().expect("relay lock").remove(&self.id);
    }
}

impl Relay {
    /// The relay of replica `replica`; with Redis, answers for it arrive on its own channel.
    pub fn start(replica: String, redis: Option<Arc<Redis>>, shutdown: CancellationToken) -> Arc<Self> {
        let relay = Arc::new(Self { replica, redis, pending: Mutex::new(HashMap::new()) });
        if let Some(redis) = relay.redis.clone() {
            tokio::spawn(subscribe(Arc::clone(&relay), redis, shutdown));
        }
        relay
    }

    /// Whether answers can reach this replica from the others.
    pub fn clustered(&self) -> bool {
        self.redis.is_some()
    }

    /// Registers a question for `session` (a digest of its session id); `None` when too many are open.
    pub fn ask(self: &Arc<Self>, session: &str) -> Option<Question> {
        let mut random = [0u8; 12];
        SystemRandom::new().fill(&mut random).expect("system randomness");
        let id = format!("rt.{}.{}", self.replica, random.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let (tx, answer) = oneshot::channel();
        let mut pending = self.pending.lock().expect("relay lock");
        if pending.len() >= MAX_PENDING {
            return None;
        }
        pending.insert(id.clone(), Waiting { session: session.to_owned(), tx });
        Some(Question { id, answer, relay: Arc::clone(self) })
    }

    /// Delivers the client's response `message` to question `id` of `session`.
    pub async fn answer(&self, id: &str, session: &str, message: Value) -> Delivery {
        let owner = id.strip_prefix("rt.").and_then(|rest| rest.split_once('.')).map(|(r, _)| r);
        match owner {
            None => Delivery::Unknown,
            Some(r) if r == self.replica => self.deliver(id, session, message),
            Some(r) => {
                let Some(redis) = &self.redis else { return Delivery::Unroutable };
                let channel = redis.key(&format!("relay:{r}"));
                let payload =
                    serde_json::to_string(&Wire { i: id.to_owned(), s: session.to_owned(), m: message }).expect("json");
                let sent = redis
                    .call(|mut con| async move {
                        redis::cmd("PUBLISH").arg(channel).arg(payload).query_async::<i64>(&mut con).await
                    })
                    .await;
                if sent.is_ok() { Delivery::Forwarded } else { Delivery::Unroutable }
            }
        }
    }

    fn deliver(&self, id: &str, session: &str, message: Value) -> Delivery {
        let mut pending = self.pending.lock().expect("relay lock");
        // Only the session that was asked may answer; anything else changes nothing.
        if pending.get(id).is_none_or(|w| w.session != session) {
            return Delivery::Unknown;
        }
        let waiting = pending.remove(id).expect("checked above");
        drop(pending);
        match waiting.tx.send(message) {
            Ok(()) => Delivery::Delivered,
            Err(_) => Delivery::Unknown,
        }
    }
}

async fn subscribe(relay: Arc<Relay>, redis: Arc<Redis>, shutdown: CancellationToken) {
    let channel = redis.key(&format!("relay:{}", relay.replica));
    redis
        .listen(
            &channel,
            &shutdown,
            || {},
            |payload| {
                if let Ok(w) = serde_json::from_str::<Wire>(payload) {
                    relay.deliver(&w.i, &w.s, w.m);
                }
            },
        )
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn answers_reach_only_their_question_once() {
        let relay = Relay::start("r1".into(), None, CancellationToken::new());
        let mut q = relay.ask("s").unwrap();
        assert_eq!(relay.answer(&q.id, "other", json!(1)).await, Delivery::Unknown, "another session");
        assert_eq!(relay.answer("rt.r2.x", "s", json!(1)).await, Delivery::Unroutable, "no redis");
        assert_eq!(relay.answer("nope", "s", json!(1)).await, Delivery::Unknown);
        assert_eq!(relay.answer(&q.id, "s", json!(2)).await, Delivery::Delivered);
        assert_eq!(relay.answer(&q.id, "s", json!(3)).await, Delivery::Unknown, "answered twice");
        assert_eq!((&mut q.answer).await.unwrap(), json!(2));
    }
}
