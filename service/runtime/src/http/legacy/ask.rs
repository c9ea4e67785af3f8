//! A 2025-era call through the modern pipeline: MRTR `input_required` rounds become real requests to the client on the POST's SSE stream, answered by separate POSTs (MCP 2025-11-25 client/elicitation, client/sampling, client/roots).

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use mcp_adapter_api::Identity;
use mcp_protocol::RequestId;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::convert::{self, Converted};
use crate::http::reply;
use crate::methods;
use crate::registry::Registry;
use crate::rpc::{Accepts, Envelope, Frame, Method, Reply, Request, RpcError, response};
use crate::state::AppState;

/// Input rounds one call may take before it is ended with a tool error.
const MAX_ROUNDS: usize = 16;

/// One 2025-era request and what it takes to run it again with the client's answers.
pub struct Call {
    pub state: Arc<AppState>,
    pub registry: Arc<Registry>,
    pub headers: HeaderMap,
    pub identity: Option<Identity>,
    /// Digest of the session id (only that session may answer our questions).
    pub digest: String,
    pub id: RequestId,
    pub method: Method,
    pub params: Map<String, Value>,
    pub envelope: Envelope,
    pub accepts: Accepts,
}

impl Call {
    async fn dispatch(&self, params: Map<String, Value>) -> Reply {
        let req = Box::new(Request {
            id: self.id.clone(),
            method: self.method,
            params,
            envelope: self.envelope.clone(),
            accepts: self.accepts,
        });
        // Each round this leg runs for a 2025-era request is timed from its own start.
        methods::dispatch(
            &self.state,
            Arc::clone(&self.registry),
            &self.headers,
            req,
            self.identity.clone(),
            std::time::Instant::now(),
        )
        .await
    }

    fn tool_call(&self) -> bool {
        self.method == Method::ToolsCall
    }

    /// The final message ending the call with `text`: a tool error, or `-32603` for other methods.
    fn fail(&self, text: &str) -> Vec<u8> {
        if self.tool_call() {
            response::success(&self.id, &convert::tool_error(text))
        } else {
            response::error(Some(&self.id), &RpcError::new(crate::rpc::Kind::Internal, text))
        }
    }
}

/// Runs the call and answers it: JSON, or SSE when it streams or asks the client.
pub async fn respond(call: Call) -> Response {
    let reply = call.dispatch(call.params.clone()).await;
    let body = match reply {
        Reply::Accepted => return reply::accepted(),
        Reply::Message(_, body) => body,
        Reply::Error(id, err) => response::error(id.as_ref(), &err),
        Reply::Stream(rx) => {
            let (tx, out) = mpsc::channel(32);
            tokio::spawn(async move {
                if let Some(last) = pump(rx, &tx).await {
                    let last = finish(&call, &last, &tx).await;
                    send_last(&tx, last).await;
                }
            });
            return reply::render(Reply::Stream(out));
        }
    };
    match convert::message(&body, call.tool_call()) {
        Converted::Done(body) => reply::json(StatusCode::OK, body),
        Converted::Ask(result) => {
            let (tx, out) = mpsc::channel(32);
            tokio::spawn(async move {
                let last = rounds(&call, result, &tx).await;
                send_last(&tx, last).await;
            });
            reply::render(Reply::Stream(out))
        }
    }
}

/// Sends the final message (empty: the client went away or the call was dropped).
async fn send_last(out: &mpsc::Sender<Frame>, last: Vec<u8>) {
    if !last.is_empty() {
        let _ = out.send(Frame::Message(last)).await;
    }
}

/// Forwards notifications and keep-alives of a streamed answer; returns its final message.
async fn pump(mut rx: mpsc::Receiver<Frame>, out: &mpsc::Sender<Frame>) -> Option<Vec<u8>> {
    while let Some(frame) = rx.recv().await {
        match frame {
            Frame::KeepAlive => out.send(Frame::KeepAlive).await.ok()?,
            Frame::Message(m) => {
                let notification = serde_json::from_slice::<Value>(&m).is_ok_and(|v| v.get("method").is_some());
                if !notification {
                    return Some(m);
                }
                out.send(Frame::Message(m)).await.ok()?;
            }
        }
    }
    None
}

/// The final message for a modern final message: converted, after any input rounds.
async fn finish(call: &Call, last: &[u8], out: &mpsc::Sender<Frame>) -> Vec<u8> {
    match convert::message(last, call.tool_call()) {
        Converted::Done(body) => body,
        Converted::Ask(result) => rounds(call, result, out).await,
    }
}

/// Asks the client what each `input_required` round needs and runs the call again with its answers.
async fn rounds(call: &Call, mut result: Map<String, Value>, out: &mpsc::Sender<Frame>) -> Vec<u8> {
    if !call.accepts.sse {
        return call.fail("This tool needs to ask the client a question, which needs Accept: text/event-stream");
    }
    // The client's answer is awaited as long as the tool may run (`server.call_timeout_ms`).
    let wait = call.registry.call_timeout;
    // URL-mode elicitations the person agreed to open, by key, with the id they were sent under.
    let mut opened: Vec<(String, String)> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let requests = match result.remove("inputRequests") {
            Some(Value::Object(r)) => r,
            _ => Map::new(),
        };
        let mut questions = Vec::with_capacity(requests.len());
        let mut urls: Vec<(String, String)> = Vec::new();
        for (key, mut request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
            // A 2025-11-25 URL-mode elicitation carries an id (client/elicitation § URL mode).
            if let Some(params) = request.get_mut("params").and_then(Value::as_object_mut)
                && params.get("mode").and_then(Value::as_str) == Some("url")
            {
                let id = uuid::Uuid::new_v4().to_string();
                params.insert("elicitationId".into(), Value::String(id.clone()));
                urls.push((key.clone(), id));
            }
            let Some(question) = call.state.relay.ask(&call.digest) else {
                return call.fail("The server has too many questions open; try again later");
            };
            let message = json!({"jsonrpc": "2.0", "id": question.id, "method": method,
                "params": request.get("params").cloned().unwrap_or_else(|| json!({}))});
            if out.send(Frame::Message(serde_json::to_vec(&message).expect("json"))).await.is_err() {
                return Vec::new();
            }
            questions.push((key, method, question));
        }
        let mut responses = Map::new();
        for (key, method, mut question) in questions {
            // Keep-alives while the client (perhaps a person) answers, so proxies keep the stream.
            let deadline = tokio::time::Instant::now() + wait;
            let mut tick = tokio::time::interval(call.state.server.sse_keepalive);
            tick.tick().await;
            let answer = loop {
                tokio::select! {
                    a = &mut question.answer => break Ok(a),
                    () = tokio::time::sleep_until(deadline) => break Err(()),
                    _ = tick.tick() => {
                        if out.send(Frame::KeepAlive).await.is_err() {
                            return Vec::new();
                        }
                    }
                    () = out.closed() => return Vec::new(),
                }
            };
            match answer {
                Ok(Ok(Value::Object(mut a))) => match (a.remove("result"), a.remove("error")) {
                    (Some(r), _) => {
                        if r.get("action").and_then(Value::as_str) == Some("accept")
                            && let Some(at) = urls.iter().position(|(k, _)| *k == key)
                        {
                            opened.push(urls.swap_remove(at));
                        }
                        responses.insert(key, r);
                    }
                    (None, e) => {
                        let why =
                            e.as_ref().and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or("no result");
                        return call.fail(&format!("The client refused {method}: {why}"));
                    }
                },
                _ => {
                    let cluster = if call.state.relay.clustered() {
                        ""
                    } else {
                        " (several replicas without [redis] cannot route the answer back)"
                    };
                    return call
                        .fail(&format!("No answer from the client to {method} within {} s{cluster}", wait.as_secs()));
                }
            }
        }
        let mut params = call.params.clone();
        params.insert("inputResponses".into(), Value::Object(responses));
        if let Some(state) = result.remove("requestState") {
            params.insert("requestState".into(), state);
        }
        let Some(body) = run(call, params.clone(), out).await else { return Vec::new() };
        let mut next = convert::message(&body, call.tool_call());
        // While the person completes a URL they agreed to open, the tool asks for it again:
        // ask the tool again each second (any replica may see the flow end), not the person.
        let deadline = tokio::time::Instant::now() + wait;
        while let Converted::Ask(r) = &next
            && asks_only(r, &opened)
            && tokio::time::Instant::now() < deadline
        {
            tokio::select! {
                () = tokio::time::sleep(URL_POLL) => {}
                () = out.closed() => return Vec::new(),
            }
            if out.send(Frame::KeepAlive).await.is_err() {
                return Vec::new();
            }
            let Some(body) = run(call, params.clone(), out).await else { return Vec::new() };
            next = convert::message(&body, call.tool_call());
        }
        // The out-of-band step ended (MCP 2025-11-25 client/elicitation § Completion Notifications);
        // one still asked for after the wait is asked again below, under a new id.
        let ended = !matches!(&next, Converted::Ask(r) if asks_only(r, &opened));
        for (_, id) in opened.drain(..) {
            if ended {
                let done = json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                    "params": {"elicitationId": id}});
                let _ = out.send(Frame::Message(serde_json::to_vec(&done).expect("json"))).await;
            }
        }
        match next {
            Converted::Done(body) => return body,
            Converted::Ask(next) => result = next,
        }
    }
    call.fail("The tool asked for input too many times")
}

/// How often a call waiting on a URL the person opened is asked again.
const URL_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether an interim result asks for nothing but URLs the person already agreed to open.
fn asks_only(result: &Map<String, Value>, opened: &[(String, String)]) -> bool {
    !opened.is_empty()
        && result
            .get("inputRequests")
            .and_then(Value::as_object)
            .is_some_and(|r| !r.is_empty() && r.keys().all(|k| opened.iter().any(|(o, _)| o == k)))
}

/// Runs the call once more with `params`; its final message (`None`: the client went away).
async fn run(call: &Call, params: Map<String, Value>, out: &mpsc::Sender<Frame>) -> Option<Vec<u8>> {
    match call.dispatch(params).await {
        Reply::Message(_, body) => Some(body),
        Reply::Error(id, err) => Some(response::error(id.as_ref(), &err)),
        Reply::Stream(rx) => pump(rx, out).await,
        Reply::Accepted => None,
    }
}
