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

pub mod catalog;
pub mod config;
pub mod exchange;
pub mod http;
pub mod relay;
pub mod sse;
pub mod stdio;
pub mod upstream;
pub mod wire;

use std::ffi::OsString;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_adapter_api::protocol::{CallToolResult, GetPromptResult, ReadResourceResult, meta};
use mcp_adapter_api::{
    Adapter, AdapterError, Build, BuildContext, CallContext, CancellationToken, Catalog, Completion, ConfigProblem,
    Outcome, Problems, PromptGet, ResourceRead, ToolCall, async_trait,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio_util::sync::DropGuard;

pub use config::McpConfig;

use crate::catalog::{Naming, View};
use crate::http::Http;
use crate::stdio::{Program, Settings, Stdio};
use crate::upstream::{Shared, Transport};

/// The adapter: the upstream and the view calls read. Dropped (after a reload), it stops its
/// background tasks and hosted processes.
#[derive(Debug)]
pub struct Mcp {
    shared: Arc<Shared>,
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
        let stop = CancellationToken::new();
        // Notices of hosted processes reach the shared state once it exists.
        let hook: Arc<OnceLock<Weak<Shared>>> = Arc::default();
        let (transport, label) = match (&config.url, &config.command) {
            (Some(url), _) => {
                (Transport::Http(Box::new(Http::build(config, url, &cx.env, cx.user_auth.is_some())?)), url.clone())
            }
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
        tokio::spawn(Arc::clone(&shared).keep_fresh(stop.clone()));
        if let Transport::Http(_) = &shared.transport {
            let (s, stop) = (Arc::clone(&shared), stop.clone());
            tokio::spawn(async move {
                let Transport::Http(h) = &s.transport else { return };
                let notice = |m: &str, p: &Value| s.notice(m, p);
                h.watch(&stop, &notice).await;
            });
        }
        Ok(Self { shared, _stop: stop.drop_guard() })
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

    async fn call_tool(&self, call: ToolCall<'_>, cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
        let upstream = self.shared.view.load().tools.get(call.name).cloned();
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

impl Mcp {
    /// Every problem of `config` that [`Build::build`] would find, without starting anything:
    /// with an offline `cx.env` (`check --offline`) the program is not looked up and no
    /// secret is read.
    pub fn check(config: &McpConfig, cx: &BuildContext) -> Problems {
        let mut problems = Problems::new();
        if config.catalog_ttl_ms == 0 {
            problems.add("catalog_ttl_ms", "must be at least 1");
        }
        if config.request_timeout_ms == 0 {
            problems.add("request_timeout_ms", "must be at least 1");
        }
        if !config.prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)) {
            problems.add("prefix", "may hold only A-Z a-z 0-9 _ - . (it becomes part of tool names)");
        }
        match (&config.url, &config.command) {
            (Some(url), None) => {
                problems.ok(stdio_keys_unset(config));
                problems.ok(Http::build(config, url, &cx.env, cx.user_auth.is_some()));
                if let Some(upstream) = &cx.user_auth
                    && config.token_exchange.is_some()
                {
                    problems.add(
                        "user_auth",
                        format!("calls carry each caller's own token from '{upstream}': drop token_exchange"),
                    );
                }
            }
            (None, Some(command)) => {
                if config.auth.is_some() || !config.headers.is_empty() {
                    problems.add("auth", "`auth` and `headers` are for `url` upstreams");
                }
                for (key, set) in
                    [("token_exchange", config.token_exchange.is_some()), ("user_auth", cx.user_auth.is_some())]
                {
                    if set {
                        problems.add(
                            key,
                            "is for `url` upstreams (a hosted stdio server is one process for every caller): remove \
                             it, or reach the server by `url`",
                        );
                    }
                }
                if config.processes == 0 || config.processes > 64 {
                    problems.add("processes", "must be between 1 and 64");
                }
                problems.ok(program(config, command, cx));
            }
            _ => {
                problems.add("url", "set exactly one of `url` (a remote server) and `command` (a hosted stdio server)");
            }
        }
        problems
    }
}

/// `url` upstreams take none of the keys of hosted servers.
fn stdio_keys_unset(c: &McpConfig) -> Result<(), ConfigProblem> {
    let set = [
        ("args", !c.args.is_empty()),
        ("env_allow", !c.env_allow.is_empty()),
        ("env", !c.env.is_empty()),
        ("working_dir", c.working_dir.is_some()),
    ];
    match set.iter().find(|(_, on)| *on) {
        Some((key, _)) => Err(ConfigProblem::new(*key, "is for `command` upstreams (hosted stdio servers)")),
        None => Ok(()),
    }
}

/// The hosted server's program and environment, resolved once (as the CLI adapter does).
fn program(c: &McpConfig, command: &str, cx: &BuildContext) -> Result<Program, ConfigProblem> {
    let path = if cx.env.is_offline() {
        mcp_adapter_cli::executable::check_name(command).map(|()| command.into())
    } else {
        mcp_adapter_cli::executable::resolve(command, cx.env.get("PATH").map(std::ffi::OsStr::new))
    }
    .map_err(|p| ConfigProblem::new("command", p))?;
    for (i, a) in c.args.iter().enumerate() {
        if a.contains('\0') {
            return Err(ConfigProblem::new(format!("args[{i}]"), "contains a NUL byte"));
        }
    }
    let lookup = |name: &str| cx.env.get(name).map(OsString::from);
    let env = mcp_adapter_cli::env::resolve(&c.env_allow, &c.env, &c.allow_loader_env, &lookup)
        .map_err(|e| ConfigProblem::new(e.key, e.problem))?;
    Ok(Program {
        path,
        args: c.args.clone(),
        env,
        working_dir: c.working_dir.as_ref().map(Into::into),
        limits: c.limits,
    })
}
