//! `subscriptions/listen` (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen): the one long-lived push channel. Answers with an SSE
//! stream whose first event acknowledges the honoured filter, then delivers the change events
//! the client asked for, each tagged with the subscription id; on shutdown it sends the
//! listen response and closes.

use std::sync::Arc;

use mcp_adapter_api::Change;
use mcp_protocol::meta;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::pipeline::Ctx;
use crate::registry::Capabilities;
use crate::rpc::response::{self, ResultObject, ResultType};
use crate::rpc::{Frame, Kind, Reply, RpcError};
use crate::state::streams::StreamRefused;

/// The part of a `SubscriptionFilter` this server honours.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    subscriptions: Vec<String>,
}

impl Filter {
    /// Parses the filter and drops what this server cannot deliver (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen).
    fn parse(params: &Map<String, Value>, caps: &Capabilities) -> Result<Self, RpcError> {
        let invalid = |m: &str| RpcError::invalid_params(format!("Invalid params: {m}"));
        let Some(n) = params.get("notifications").and_then(Value::as_object) else {
            return Err(invalid("subscriptions/listen needs params.notifications (a SubscriptionFilter object)"));
        };
        let flag = |key: &str| match n.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(&format!("notifications.{key} must be a boolean"))),
        };
        let subscriptions = match n.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(uris)) => uris
                .iter()
                .map(|u| u.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid("notifications.resourceSubscriptions must be an array of URI strings"))?,
            Some(_) => {
                return Err(invalid("notifications.resourceSubscriptions must be an array of URI strings"));
            }
        };
        Ok(Self {
            tools: flag("toolsListChanged")? && caps.tools,
            prompts: flag("promptsListChanged")? && caps.prompts,
            resources: flag("resourcesListChanged")? && caps.resources,
            subscriptions: if caps.resources { subscriptions } else { Vec::new() },
        })
    }

    /// The filter as acknowledged: only the members we honour.
    fn acknowledged(&self) -> Value {
        let mut ack = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                ack.insert(key.into(), Value::Bool(true));
            }
        }
        if !self.subscriptions.is_empty() {
            ack.insert("resourceSubscriptions".into(), json!(self.subscriptions));
        }
        Value::Object(ack)
    }

    /// The notification method and extra params for `change`, if this stream wants it.
    fn wants<'c>(&self, change: &'c Change) -> Option<(&'static str, Option<&'c str>)> {
        match change {
            Change::ToolsListChanged if self.tools => Some(("notifications/tools/list_changed", None)),
            Change::PromptsListChanged if self.prompts => Some(("notifications/prompts/list_changed", None)),
            Change::ResourcesListChanged if self.resources => Some(("notifications/resources/list_changed", None)),
            // The updated URI may be a sub-resource of the one subscribed (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen).
            Change::ResourceUpdated(uri) if self.subscriptions.iter().any(|s| uri.starts_with(s.as_str())) => {
                Some(("notifications/resources/updated", Some(uri.as_str())))
            }
            _ => None,
        }
    }
}

/// The answer to a stream over one of its caps: 503 when the replica is full (another
/// replica may have room), 429 when the caller is; both say which setting, how many streams
/// are open and when to retry (`data.retryAfterMs`, and `Retry-After`).
pub fn refused(r: StreamRefused) -> RpcError {
    let StreamRefused { setting, open, max } = r;
    let (kind, whose) = if r.per_caller() {
        (Kind::RateLimited, "of this caller on this replica; close one of them")
    } else {
        (Kind::Overloaded, "on this replica; retry later (another replica may have room)")
    };
    RpcError::new(kind, format!("Too many open streams: {open} are open {whose}, or raise {setting} (now {max})"))
        .with_data(json!({ "limit": setting, "open": open, "max": max, "retryAfterMs": 1000 }))
}

pub fn handle(ctx: &Ctx<'_>, params: &Map<String, Value>) -> Result<Reply, RpcError> {
    if !ctx.accepts.sse {
        return Err(RpcError::new(
            Kind::NotAcceptable,
            "Not Acceptable: subscriptions/listen answers with an SSE stream; include text/event-stream in Accept",
        ));
    }
    let filter = Filter::parse(params, &ctx.registry.capabilities)?;
    // Task ids need the extension on this request (MCP tasks extension § Methods); they are not pushed (yet):
    // left out of the acknowledgement, clients poll tasks/get.
    if params.get("notifications").and_then(|n| n.get("taskIds")).is_some() {
        crate::tasks::require_extension(&ctx.envelope, "notifications.taskIds")?;
    }
    let state = Arc::clone(ctx.state);
    let slot = state.streams.acquire(ctx.principal()).map_err(refused)?;
    // Subscribe before acknowledging so no change after the ack is missed.
    let events = state.events.subscribe(ctx.path());
    let id = ctx.id.clone();
    let sub_id = id.to_value();
    let info = Arc::clone(&ctx.registry);
    let (tx, rx) = mpsc::channel::<Frame>(32);
    tokio::spawn(async move {
        let _slot = slot;
        let tagged = |method: &str, uri: Option<&str>| {
            let mut params = json!({ "_meta": { (meta::SUBSCRIPTION_ID): sub_id } });
            if let Some(uri) = uri {
                params["uri"] = json!(uri);
            }
            Frame::Message(response::notification(method, &params))
        };
        // Rendered in one statement: the acknowledgement's JSON is not kept for the stream's life.
        let ack = Frame::Message(response::notification(
            "notifications/subscriptions/acknowledged",
            &json!({ "_meta": { (meta::SUBSCRIPTION_ID): sub_id }, "notifications": filter.acknowledged() }),
        ));
        if tx.send(ack).await.is_err() {
            return;
        }
        let keepalive = state.server.sse_keepalive;
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
        let mut events = events;
        loop {
            let out: Vec<Frame> = tokio::select! {
                biased;
                () = tx.closed() => return,
                () = state.shutdown.cancelled() => {
                    // Graceful close: the listen response, then end of stream (MCP 2026-07-28 basic/patterns/subscriptions § subscriptions/listen).
                    let meta: Map<String, Value> = [(meta::SUBSCRIPTION_ID.to_owned(), sub_id.clone())].into_iter().collect();
                    let body = response::success(&id, &ResultObject::new(ResultType::Complete, &Map::new(), &info.server_info).with_meta(Some(&meta)));
                    let _ = tx.send(Frame::Message(body)).await;
                    return;
                }
                change = events.recv() => match change {
                    Ok(change) => filter.wants(&change).map(|(m, uri)| tagged(m, uri)).into_iter().collect(),
                    // Missed events: tell the client to refresh everything it watches.
                    Err(broadcast::error::RecvError::Lagged(_)) => [Change::ToolsListChanged, Change::PromptsListChanged, Change::ResourcesListChanged]
                        .iter()
                        .filter_map(|c| filter.wants(c).map(|(m, _)| tagged(m, None)))
                        .collect(),
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = ticker.tick() => vec![Frame::KeepAlive],
            };
            for frame in out {
                if tx.send(frame).await.is_err() {
                    return;
                }
            }
        }
    });
    Ok(Reply::Stream(rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Capabilities =
        Capabilities { tools: true, resources: true, prompts: true, completions: true, skills: true };

    #[test]
    fn filter_honours_only_what_is_advertised() {
        let p = json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["file:///x"]}});
        let caps = Capabilities { prompts: false, ..ALL };
        let f = Filter::parse(p.as_object().unwrap(), &caps).unwrap();
        assert_eq!(f.acknowledged(), json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///x"]}));
        assert!(f.wants(&Change::PromptsListChanged).is_none());
        assert!(f.wants(&Change::ResourceUpdated("file:///x/y".into())).is_some());
        assert!(f.wants(&Change::ResourceUpdated("file:///z".into())).is_none());
    }

    #[test]
    fn bad_filters_are_invalid_params() {
        for p in [
            json!({}),
            json!({"notifications": {"toolsListChanged": "yes"}}),
            json!({"notifications": {"resourceSubscriptions": [1]}}),
        ] {
            assert_eq!(Filter::parse(p.as_object().unwrap(), &ALL).unwrap_err().kind, Kind::InvalidParams);
        }
    }
}
