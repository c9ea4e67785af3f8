//! The MCP upstream adapter: another MCP server's tools, resources, templates and prompts
//! served as ours, under a prefix and through allow/deny lists.
//!
//! The upstream is a remote Streamable HTTP server (modern 2026-07-28, or 2025-era with a held
//! session) or a hosted stdio server this replica starts and restarts. Its lists are fetched
//! at start, on a TTL and on its `list_changed`; a changed catalog makes the runtime rebuild
//! its registry (`BuildContext::catalog_changed`). Calls pass through with their arguments
//! (checked by the upstream against its own schema, not by the runtime), progress,
//! cancellation, `structuredContent` and errors; the upstream's questions become our own MRTR
//! rounds.
//!
//! Files (the roles every adapter has):
//! - [`config`]: the `[[adapters]] kind = "mcp"` section as written.
//! - [`catalog`]: filtering and renaming the upstream's lists into a [`catalog::View`].
//! - [`wire`]: request building (the envelope of each revision) and reading messages.
//! - [`exchange`], [`http`], [`sse`], [`stdio`], [`upstream`]: execution over each transport.
//! - [`relay`]: one call, its notices and its input rounds; output and error mapping.
//! - [`per_caller`]: each caller's own tools, for an upstream with no service credential.
//! - `setup`: checking the section, resolving a hosted program.

pub mod catalog;
pub mod config;
pub mod exchange;
pub mod http;
pub mod per_caller;
pub mod relay;
mod setup;
pub mod sse;
pub mod stdio;
pub mod upstream;
pub mod wire;

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_adapter_api::protocol::{CallToolResult, GetPromptResult, ReadResourceResult, meta};
use mcp_adapter_api::{
    Adapter, AdapterError, Build, BuildContext, CallContext, CancellationToken, Catalog, Completion, Outcome, Problems,
    PromptGet, ResourceRead, ToolCall, ToolSpec, async_trait,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio_util::sync::DropGuard;

pub use config::McpConfig;

use crate::catalog::{Naming, View};
use crate::http::Http;
use crate::setup::program;
use crate::stdio::{Settings, Stdio};
use crate::upstream::{Shared, Transport};

/// The adapter: the upstream and the view calls read. Dropped (after a reload), it stops its
/// background tasks and hosted processes.
#[derive(Debug)]
pub struct Mcp {
    shared: Arc<Shared>,
    /// With `user_auth` or `token_exchange` and no `auth`: each caller's tools ([`per_caller`]).
    callers: Option<per_caller::Callers>,
    _stop: DropGuard,
}

impl Build for Mcp {
    type Config = McpConfig;

    /// Validates `config` (every problem: [`Mcp::check`]), resolves the program and its
    /// environment (stdio) or builds the client (HTTP), and starts the background work
    /// (needs a Tokio runtime).
    fn build(config: &McpConfig, cx: &BuildContext) -> Result<Self, Problems> {
        let problems = Self::check(config, cx);
        if !problems.is_empty() {
            return Err(problems);
        }
        let naming = Naming { prefix: config.prefix.clone(), allow: config.allow.clone(), deny: config.deny.clone() };
        // Calls go with each caller's own credential (a 2025-era server binds its sessions to it).
        let per_caller = cx.user_auth.is_some() || config.token_exchange.is_some();
        let stop = CancellationToken::new();
        // Notices of hosted processes reach the shared state once it exists.
        let hook: Arc<OnceLock<Weak<Shared>>> = Arc::default();
        let (transport, label) = match (&config.url, &config.command) {
            (Some(url), _) => (Transport::Http(Box::new(Http::build(config, url, &cx.env, per_caller)?)), url.clone()),
            // `check` saw exactly one of them.
            (None, command) => {
                let command = command.as_deref().unwrap_or_default();
                let hook = Arc::clone(&hook);
                let settings = Settings {
                    // Log lines name the adapter as the config does, not its program.
                    name: if cx.name.is_empty() { command.to_owned() } else { cx.name.clone() },
                    program: program(config, command, cx)?,
                    protocol: config.protocol,
                    request_timeout: Duration::from_millis(config.request_timeout_ms),
                    health_interval: (config.health_interval_ms > 0)
                        .then(|| Duration::from_millis(config.health_interval_ms)),
                    restart: config.restart,
                    max_message_bytes: config.max_message_bytes,
                    on_notice: Box::new(move |m, p| {
                        if let Some(s) = hook.get().and_then(Weak::upgrade) {
                            s.notice(m, p);
                        }
                    }),
                };
                (Transport::Stdio(Stdio::start(settings, config.processes, stop.clone())), command.to_owned())
            }
        };
        let shared = Arc::new(Shared {
            transport,
            view: ArcSwap::from_pointee(View::default()),
            naming,
            label,
            refresh_now: tokio::sync::Notify::new(),
            ttl: Duration::from_millis(config.catalog_ttl_ms),
            request_timeout: Duration::from_millis(config.request_timeout_ms),
            catalog_changed: cx.catalog_changed.clone(),
            changes: cx.changes.clone(),
            first: tokio::sync::watch::channel(false).0,
            announced: Default::default(),
        });
        let _ = hook.set(Arc::downgrade(&shared));
        // No service credential to list with: each caller's own tools, fetched as they come.
        let callers = (config.url.is_some() && config.auth.is_none() && per_caller)
            .then(|| per_caller::Callers::new(shared.ttl, cx.user_auth.as_deref()));
        if let Some(c) = &callers {
            let mut view = View::default();
            view.catalog.tools.extend(c.connect_tool(&shared.naming, &shared.label));
            shared.view.store(Arc::new(view));
            shared.first.send_replace(true);
            return Ok(Self { shared, callers, _stop: stop.drop_guard() });
        }
        tokio::spawn(Arc::clone(&shared).keep_fresh(stop.clone()));
        if let Transport::Http(_) = &shared.transport {
            let (s, stop) = (Arc::clone(&shared), stop.clone());
            tokio::spawn(async move {
                let Transport::Http(h) = &s.transport else { return };
                let notice = |m: &str, p: &Value| s.notice(m, p);
                h.watch(&stop, &notice).await;
            });
        }
        Ok(Self { shared, callers, _stop: stop.drop_guard() })
    }
}

impl Mcp {
    /// Waits until the first fetch of the upstream's lists ended (well or not), at most
    /// `timeout`: the runtime then builds its first registry with the upstream's catalog.
    pub async fn first_catalog(&self, timeout: Duration) {
        let mut first = self.shared.first.subscribe();
        let _ = tokio::time::timeout(timeout, first.wait_for(|done| *done)).await;
    }

    /// Pids of the hosted server processes (the supervisors, when there are).
    pub fn pids(&self) -> Vec<u32> {
        match &self.shared.transport {
            Transport::Stdio(s) => s.pids(),
            Transport::Http(_) => Vec::new(),
        }
    }

    /// One call through: `Outcome<Value>` with the upstream's result object.
    async fn through(
        &self,
        method: &str,
        params: Map<String, Value>,
        param_headers: Vec<(String, String)>,
        input: mcp_adapter_api::Input<'_>,
        cx: &CallContext,
    ) -> Result<Outcome<Value>, AdapterError> {
        relay::call(&self.shared, method, params, param_headers, input, cx).await
    }
}

#[async_trait]
impl Adapter for Mcp {
    fn catalog(&self) -> Catalog {
        self.shared.view.load().catalog.clone()
    }

    fn status(&self) -> mcp_adapter_api::Status {
        match &self.shared.transport {
            Transport::Stdio(s) => {
                let backends = s.status(&self.shared.label);
                mcp_adapter_api::Status {
                    healthy: Some(backends.iter().any(|b| b.state == "running")),
                    backends,
                    concurrency: None,
                }
            }
            Transport::Http(_) => mcp_adapter_api::Status {
                // Without the query: some servers take a key there.
                backends: vec![mcp_adapter_api::Backend::new(
                    self.shared.label.split(['?', '#']).next().unwrap_or_default(),
                    "remote",
                )],
                ..Default::default()
            },
        }
    }

    fn lists_per_caller(&self) -> bool {
        self.callers.is_some()
    }

    async fn caller_tools(&self, cx: &CallContext) -> Result<Arc<[ToolSpec]>, AdapterError> {
        match &self.callers {
            Some(callers) => Ok(Arc::clone(&callers.view(&self.shared, cx, false).await?.tools)),
            None => Ok(Arc::from([])),
        }
    }

    async fn call_tool(&self, call: ToolCall<'_>, cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
        let upstream = match &self.callers {
            Some(callers) if callers.is_connect(&self.shared.naming, call.name) => {
                return callers.connect(&self.shared, cx).await.map(Outcome::Complete);
            }
            Some(callers) => callers.view(&self.shared, cx, false).await?.view.tools.get(call.name).cloned(),
            None => self.shared.view.load().tools.get(call.name).cloned(),
        };
        let upstream = upstream.ok_or_else(|| AdapterError::UnknownTool(call.name.to_owned()))?;
        let headers = upstream
            .param_headers
            .iter()
            .filter_map(|(header, arg)| {
                let value = match call.arguments.get(arg)? {
                    Value::String(s) => s.clone(),
                    v @ (Value::Number(_) | Value::Bool(_)) => v.to_string(),
                    _ => return None,
                };
                Some((header.clone(), value))
            })
            .collect();
        let mut params = Map::new();
        params.insert("name".into(), json!(upstream.name));
        params.insert("arguments".into(), Value::Object(call.arguments.clone()));
        let span = tracing::info_span!("mcp.upstream", gen_ai.tool.name = call.name, upstream = %self.shared.label);
        let outcome =
            tracing::Instrument::instrument(self.through("tools/call", params, headers, call.input, cx), span).await?;
        complete(outcome)
    }

    async fn read_resource(
        &self,
        read: ResourceRead<'_>,
        cx: &CallContext,
    ) -> Result<Outcome<ReadResourceResult>, AdapterError> {
        let mut params = Map::new();
        params.insert("uri".into(), json!(read.uri));
        let outcome = relay::call(&self.shared, "resources/read", params, Vec::new(), read.input, cx).await.map_err(
            |e| match e {
                AdapterError::InvalidArguments { .. } => AdapterError::ResourceNotFound(read.uri.to_owned()),
                e => e,
            },
        )?;
        complete(outcome)
    }

    async fn get_prompt(&self, get: PromptGet<'_>, cx: &CallContext) -> Result<Outcome<GetPromptResult>, AdapterError> {
        let upstream = self.shared.view.load().prompts.get(get.name).cloned();
        let upstream = upstream.ok_or_else(|| AdapterError::UnknownPrompt(get.name.to_owned()))?;
        let mut params = Map::new();
        params.insert("name".into(), json!(upstream));
        params.insert("arguments".into(), Value::Object(get.arguments.clone()));
        complete(self.through("prompts/get", params, Vec::new(), get.input, cx).await?)
    }

    async fn complete(
        &self,
        request: Completion<'_>,
        cx: &CallContext,
    ) -> Result<mcp_adapter_api::protocol::Completion, AdapterError> {
        let mut reference = serde_json::to_value(request.reference).expect("serializable");
        if let Some(name) = reference.get("name").and_then(Value::as_str) {
            let upstream = self.shared.view.load().prompts.get(name).cloned();
            reference["name"] = json!(upstream.ok_or_else(|| AdapterError::UnknownPrompt(name.to_owned()))?);
        }
        let mut params = Map::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), json!({"name": request.argument, "value": request.value}));
        if let Some(context) = request.context {
            params.insert("context".into(), json!({"arguments": context}));
        }
        match self.through("completion/complete", params, Vec::new(), Default::default(), cx).await? {
            Outcome::Complete(mut result) => parse(result["completion"].take()),
            Outcome::InputRequired(_) => {
                Err(AdapterError::Backend("the upstream asked for input during completion".into()))
            }
        }
    }
}

/// The upstream's result object as our typed result: `resultType` and its `serverInfo` left
/// to the runtime, everything else (`structuredContent`, `isError`, `_meta`) kept.
fn complete<T: DeserializeOwned>(outcome: Outcome<Value>) -> Result<Outcome<T>, AdapterError> {
    match outcome {
        Outcome::Complete(mut result) => {
            if let Some(obj) = result.as_object_mut() {
                obj.remove("resultType");
                if let Some(Value::Object(m)) = obj.get_mut("_meta") {
                    m.remove(meta::SERVER_INFO);
                    if m.is_empty() {
                        obj.remove("_meta");
                    }
                }
            }
            parse(result).map(Outcome::Complete)
        }
        Outcome::InputRequired(round) => Ok(Outcome::InputRequired(round)),
    }
}

fn parse<T: DeserializeOwned>(value: Value) -> Result<T, AdapterError> {
    serde_json::from_value(value)
        .map_err(|e| AdapterError::Backend(format!("the upstream's result does not parse: {e}")))
}
