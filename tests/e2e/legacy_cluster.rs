//! 2025-era clients through three replicas sharing one Redis behind a real nginx running the
//! shipped round-robin config: elicitation flows whose answer POST lands on another replica than
//! the one holding the call's SSE stream (the server's request goes out on that stream, the
//! client's response comes back in a separate POST: MCP 2025-11-25 basic/transports
//! § Sending Messages to the Server, client/elicitation), and `kill -9` of a replica holding
//! streams: its calls end with an error, the other flows complete.
//!
//! Same needs as `cluster` (nginx, the interop harness); the scenarios share its lock, and their
//! module path contains `cluster::behind_nginx::`, so tests/run.sh runs them in that step.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mcp_e2e::Server;
use mcp_e2e::client::sse_messages;
use serde_json::{Value, json};

use crate::cluster::{CLUSTER, Cluster};

const VERSION: &str = "2025-11-25";
/// The client's deadline for one step of a flow (the question, then the result).
const STEP: Duration = Duration::from_secs(10);

/// `initialize` at `url` with the elicitation capability: the sealed `Mcp-Session-Id`.
async fn initialize(http: &reqwest::Client, url: &str) -> Result<String, String> {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "e2e-legacy", "version": "1"}}});
    let res = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    if res.status() != 200 {
        return Err(format!("initialize: status {}", res.status()));
    }
    let session = res.headers().get("mcp-session-id").ok_or("initialize: no Mcp-Session-Id")?;
    Ok(session.to_str().map_err(|e| e.to_string())?.to_owned())
}

/// POSTs `body` with the session's headers.
fn post(http: &reqwest::Client, url: &str, session: &str, body: &Value) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", VERSION)
        .body(body.to_string())
}

enum Next {
    Message(Value),
    /// The stream ended (cleanly or not) before another message.
    Ended(String),
    TimedOut,
}

/// The SSE stream of one `tools/call`.
struct Call {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: Vec<u8>,
}

impl Call {
    /// `tools/call` of the conformance fixture `test_elicitation` (it asks one question).
    async fn open(http: &reqwest::Client, url: &str, session: &str, id: u64) -> Result<Self, String> {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": format!("flow {id}: who are you?")}}});
        let res = post(http, url, session, &call).send().await.map_err(|e| format!("tools/call: {e}"))?;
        if res.status() != 200 {
            return Err(format!("tools/call: status {}", res.status()));
        }
        Ok(Self { body: Box::pin(res.bytes_stream()), buf: Vec::new() })
    }

    async fn next(&mut self, within: Duration) -> Next {
        let end = tokio::time::Instant::now() + within;
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buf.drain(..pos + 2).collect();
                if let Some(m) = sse_messages(&event).into_iter().next() {
                    return Next::Message(m);
                }
                continue;
            }
            match tokio::time::timeout_at(end, self.body.next()).await {
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Some(Err(e))) => return Next::Ended(format!("error: {e}")),
                Ok(None) => return Next::Ended("end of stream".into()),
                Err(_) => return Next::TimedOut,
            }
        }
    }

    /// The next message, which must be the server's `elicitation/create`.
    async fn question(&mut self) -> Result<Value, String> {
        match self.next(STEP).await {
            Next::Message(m) if m["method"] == "elicitation/create" => Ok(m),
            Next::Message(m) => Err(format!("expected elicitation/create, got {m}")),
            Next::Ended(why) => Err(format!("stream ended before the question ({why})")),
            Next::TimedOut => Err("no question within the deadline".into()),
        }
    }

    /// The next message, which must be the call's result using `username`.
    async fn result(&mut self, id: u64, username: &str) -> Result<(), String> {
        match self.next(STEP).await {
            Next::Message(m) if m["id"] == id => {
                let text = m["result"]["content"][0]["text"].as_str().unwrap_or_default();
                if m["result"]["isError"] == true || !text.contains(username) {
                    return Err(format!("result {m}"));
                }
                Ok(())
            }
            Next::Message(m) => Err(format!("expected the result of {id}, got {m}")),
            Next::Ended(why) => Err(format!("stream ended before the result ({why})")),
            Next::TimedOut => Err("no result within the deadline".into()),
        }
    }
}

/// The client's answer to `question`, POSTed to `url`: its status.
async fn answer(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    question: &Value,
    username: &str,
) -> Result<u16, String> {
    let body = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"username": username, "email": "e2e@example.com"}}});
    let res = post(http, url, session, &body).send().await.map_err(|e| format!("answer: {e}"))?;
    Ok(res.status().as_u16())
}

/// The replica that asked `question`: its request ids are `rt.<replica>.<random>`.
fn asker(question: &Value) -> String {
    let id = question["id"].as_str().unwrap_or_default();
    id.strip_prefix("rt.").and_then(|rest| rest.split_once('.')).map(|(r, _)| r.to_owned()).unwrap_or_default()
}

/// Which replica (index into `replicas`) asks under which id: one flow straight at each.
async fn replica_ids(http: &reqwest::Client, replicas: &[Server]) -> BTreeMap<String, usize> {
    let mut ids = BTreeMap::new();
    for (i, r) in replicas.iter().enumerate() {
        let session = initialize(http, &r.url).await.expect("initialize");
        let mut call = Call::open(http, &r.url, &session, 1).await.expect("tools/call");
        let question = call.question().await.expect("the question");
        assert_eq!(answer(http, &r.url, &session, &question, "warm-up").await, Ok(202));
        call.result(1, "warm-up").await.expect("the result");
        ids.insert(asker(&question), i);
    }
    assert_eq!(ids.len(), replicas.len(), "distinct replica ids: {ids:?}");
    ids
}

mod behind_nginx {
    use super::*;

    #[test]
    fn legacy_elicitation_answered_on_another_replica_200_flows() {
        const FLOWS: u64 = 200;
        const CONCURRENCY: usize = 10;
        let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let cluster = Cluster::start();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
        runtime.block_on(async {
            let http = reqwest::Client::new();
            let ids = replica_ids(&http, &cluster.replicas).await;
            let urls: Vec<String> = cluster.replicas.iter().map(|r| r.url.clone()).collect();
            let nginx = cluster.nginx.url.clone();
            let (ids, urls, nginx, http) = (&ids, &urls, &nginx, &http);
            // One flow: initialize, the call and its stream through nginx; the answer straight
            // to a replica other than the one holding the stream.
            let flow = |id: u64| async move {
                let started = Instant::now();
                let username = format!("flow-{id}");
                let session = initialize(http, nginx).await?;
                let mut call = Call::open(http, nginx, &session, id).await?;
                let question = call.question().await?;
                let holder = *ids.get(&asker(&question)).ok_or_else(|| format!("unknown asker in {question}"))?;
                let to = (holder + 1 + (id as usize % 2)) % urls.len();
                let status = answer(http, &urls[to], &session, &question, &username).await?;
                if status != 202 {
                    return Err(format!("answer POST: status {status}"));
                }
                call.result(id, &username).await?;
                Ok::<_, String>((holder, to, started.elapsed()))
            };
            let started = Instant::now();
            let outcomes: Vec<Result<(usize, usize, Duration), String>> = tokio::time::timeout(
                Duration::from_secs(180),
                futures_util::stream::iter(1..=FLOWS).map(|id| flow(100 + id)).buffer_unordered(CONCURRENCY).collect(),
            )
            .await
            .expect("200 flows within 180 s");
            let wall = started.elapsed();
            let errors: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
            let ok: Vec<&(usize, usize, Duration)> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
            let mut held = [0usize; 3];
            let mut latencies: Vec<Duration> = ok
                .iter()
                .map(|(h, _, d)| {
                    held[*h] += 1;
                    *d
                })
                .collect();
            latencies.sort();
            let pct =
                |p: f64| latencies.get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)));
            println!(
                "legacy elicitation flows through nginx: {}/{FLOWS} complete, concurrency {CONCURRENCY}, {:.1} s; \
                 streams held by replicas {held:?}, every answer POSTed to another replica; \
                 flow latency p50 {:?} p95 {:?} max {:?}",
                ok.len(),
                wall.as_secs_f64(),
                pct(0.5),
                pct(0.95),
                latencies.last()
            );
            assert!(errors.is_empty(), "{} flows failed: {errors:?}", errors.len());
            assert_eq!(ok.len() as u64, FLOWS);
            assert!(ok.iter().all(|(h, to, _)| h != to));
            assert!(held.iter().all(|&n| n > 0), "round-robin spread the streams over all three replicas: {held:?}");
        });
    }

    #[test]
    fn legacy_streams_of_a_killed_replica_end_in_an_error_others_complete() {
        const OPEN: u64 = 9;
        let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        let mut cluster = Cluster::start();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
        let http = reqwest::Client::new();
        let ids = runtime.block_on(replica_ids(&http, &cluster.replicas));
        let nginx = cluster.nginx.url.clone();
        // Nine calls waiting on their question, opened one after another through nginx.
        let mut flows = Vec::new();
        runtime.block_on(async {
            for id in 1..=OPEN {
                let session = initialize(&http, &nginx).await.expect("initialize");
                let mut call = Call::open(&http, &nginx, &session, id).await.expect("tools/call");
                let question = call.question().await.expect("the question");
                let holder = ids[&asker(&question)];
                flows.push((id, session, call, question, holder));
            }
        });
        let victim = flows[0].4;
        let (doomed, survivors): (Vec<_>, Vec<_>) = flows.into_iter().partition(|f| f.4 == victim);
        assert!(!survivors.is_empty(), "round-robin put streams on other replicas too");
        let killed = Instant::now();
        cluster.replicas[victim].signal("KILL");
        runtime.block_on(async {
            // Each call the victim held ends, and with an error, not a result, within its deadline.
            let ends = futures_util::future::join_all(doomed.into_iter().map(|(id, _, mut call, _, _)| async move {
                match call.next(STEP).await {
                    Next::Ended(why) => Ok((id, killed.elapsed(), why)),
                    Next::Message(m) => Err(format!("flow {id}: a message after the kill: {m}")),
                    Next::TimedOut => Err(format!("flow {id}: still open {STEP:?} after the kill")),
                }
            }))
            .await;
            for e in &ends {
                match e {
                    Ok((id, after, why)) => println!("flow {id} on the killed replica: ended {after:?} after the kill ({why})"),
                    Err(e) => panic!("{e}"),
                }
            }
            // The others: answered through nginx (which moves on from the dead replica), they complete.
            let others = survivors.len();
            let done = futures_util::future::join_all(survivors.into_iter().map(|(id, session, mut call, question, _)| {
                let (http, nginx) = (&http, &nginx);
                async move {
                    let username = format!("survivor-{id}");
                    let status = answer(http, nginx, &session, &question, &username).await?;
                    if status != 202 {
                        return Err(format!("flow {id}: answer POST status {status}"));
                    }
                    call.result(id, &username).await.map_err(|e| format!("flow {id}: {e}"))
                }
            }))
            .await;
            let failed: Vec<_> = done.iter().filter_map(|d| d.as_ref().err()).collect();
            // New flows after the kill, through nginx end to end.
            let mut fresh = 0;
            for id in 100..110 {
                let username = format!("flow-{id}");
                let session = initialize(&http, &nginx).await.expect("initialize after the kill");
                let mut call = Call::open(&http, &nginx, &session, id).await.expect("tools/call after the kill");
                let question = call.question().await.expect("a question after the kill");
                assert_ne!(ids[&asker(&question)], victim, "a stream on the dead replica");
                assert_eq!(answer(&http, &nginx, &session, &question, &username).await, Ok(202));
                call.result(id, &username).await.expect("a result after the kill");
                fresh += 1;
            }
            println!(
                "kill -9 of replica {}: {} of its calls ended with an error; {}/{others} flows on the other replicas completed; \
                 {fresh}/10 new flows after the kill completed",
                victim + 1,
                ends.len(),
                others - failed.len()
            );
            assert!(failed.is_empty(), "flows on live replicas failed: {failed:?}");
        });
        let _ = cluster.replicas[victim].wait_exit(Duration::from_secs(5));
    }
}
