//! The REST adapter: each configured tool is one HTTP request to an upstream API, sent to a
//! pool of equivalent base URLs.
//!
//! Safe by default: argument values are percent-encoded into single path segments, query
//! values and header values (no traversal, no host injection: the host only ever comes from
//! `base_urls`); redirects never leave the upstream's origin; credentials are typed secrets
//! sent as sensitive headers and never logged; only idempotent requests are retried.
//!
//! - [`config`]: the config as written (`[[adapters]] kind = "rest"`).
//! - [`auth`]: credentials (`mcp_adapter_api::Secret`) as a sensitive header.
//! - [`template`], [`request`]: request building, compiled once per tool at load.
//! - [`operation`]: requests described parameter by parameter (styles, `explode`, header and
//!   cookie parameters, form and multipart bodies), for adapters that generate tools.
//! - [`client`]: the one keep-alive HTTP client per adapter, its redirect policy.
//! - [`pool`]: round-robin upstreams, ejection, health checks.
//! - [`execute`]: attempts, retries with backoff and jitter, trace context, body cap.
//! - [`response`]: output mapping to a `CallToolResult`.
//! - [`token_exchange`]: per-caller upstream tokens by RFC 8693 token exchange, cached.

pub mod auth;
pub mod client;
pub mod config;
pub mod execute;
pub mod operation;
pub mod pool;
pub mod request;
pub mod response;
pub mod template;
pub mod token_exchange;

use std::collections::HashMap;
use std::sync::Arc;

use mcp_adapter_api::protocol::CallToolResult;
use mcp_adapter_api::{
    AdapterError, Build, BuildContext, CallContext, Catalog, Observe, Outcome, Problems, ToolCall, ToolSpec,
    async_trait,
};
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};

pub use config::{ConfigProblem, RestConfig};

use crate::execute::Executor;
pub use crate::request::Plan;
use crate::token_exchange::TokenExchange;

/// The REST adapter: its catalog, one compiled plan per tool, and the executor.
#[derive(Debug)]
pub struct Rest {
    catalog: Catalog,
    plans: HashMap<String, Plan>,
    executor: Executor,
    max_response_bytes: usize,
    /// Calls in flight at once (`max_concurrent`).
    slots: tokio::sync::Semaphore,
    max_concurrent: usize,
    /// `token_exchange`: the adapter-wide per-caller credential.
    exchange: Option<Arc<TokenExchange>>,
}

impl Build for Rest {
    type Config = RestConfig;

    /// Validates `config` and builds the client, the pool (and its health check, which needs
    /// a Tokio runtime) and the plans, reporting every problem. `cx.env` resolves
    /// `secret_env`. Problems name the key below the adapter (`tools.get_user.path`).
    fn build(config: &RestConfig, cx: &BuildContext) -> Result<Self, Problems> {
        let mut problems = Problems::new();
        let credential = problems.ok(config.auth.as_ref().map(|a| auth::header(a, &cx.env)).transpose());
        if let Some(upstream) = &cx.user_auth {
            let authorization =
                credential.as_ref().is_some_and(|c| c.as_ref().is_some_and(|(n, _)| n == AUTHORIZATION));
            if authorization || config.token_exchange.is_some() {
                problems.add(
                    "user_auth",
                    format!(
                        "sends each caller's own token from '{upstream}' as Authorization: drop {}",
                        if authorization {
                            "auth (kind = bearer or basic), or make it an api_key in another header"
                        } else {
                            "token_exchange"
                        }
                    ),
                );
            }
        }
        // With token exchange, `Authorization` belongs to the exchanged token.
        let credential_name = credential
            .as_ref()
            .and_then(|c| c.as_ref().map(|(n, _)| n.clone()))
            .or_else(|| config.token_exchange.as_ref().map(|_| AUTHORIZATION));
        let mut tools: Vec<(Plan, ToolSpec)> = Vec::with_capacity(config.tools.len());
        let mut names = std::collections::HashSet::with_capacity(config.tools.len());
        for raw in &config.tools {
            let key = format!("tools.{}", raw.name);
            if !names.insert(raw.name.as_str()) {
                problems.add(format!("{key}.name"), "is used by another tool of this adapter");
                continue;
            }
            tools.extend(problems.ok(Plan::compile(raw, &key, credential_name.as_ref())));
        }
        let rest = Self::with_plans(config, credential.flatten(), tools, &cx.env);
        match (problems.ok(rest), problems.is_empty()) {
            (Some(rest), true) => Ok(rest.observed(&cx.observe)),
            _ => Err(problems),
        }
    }
}

impl Rest {
    /// The adapter for `config`'s upstream settings (its `tools` ignored) serving `tools`:
    /// plans built by the caller, e.g. from an OpenAPI document. `credential` is a header sent
    /// on every request and health check; `env` resolves the `token_exchange` client secret
    /// (offline, no health check starts). Names must be unique (checked by the registry).
    pub fn with_plans(
        config: &RestConfig,
        credential: Option<(HeaderName, HeaderValue)>,
        tools: Vec<(Plan, ToolSpec)>,
        env: &mcp_adapter_api::Environment,
    ) -> Result<Self, Problems> {
        let mut problems = Problems::new();
        if config.token_exchange.is_some() && credential.as_ref().is_some_and(|(n, _)| n == AUTHORIZATION) {
            problems.add(
                "token_exchange",
                "sends the exchanged token as Authorization: drop auth (kind = bearer or basic), or make it an api_key \
                 in another header",
            );
        }
        let exchange = problems.ok(config
            .token_exchange
            .as_ref()
            .map(|x| TokenExchange::new(x, "token_exchange", env).map(Arc::new))
            .transpose());
        if !(1..=24 * 60 * 60 * 1000).contains(&config.retry.attempt_timeout_ms) {
            problems.add("retry.attempt_timeout_ms", "must be between 1 and 86400000 (a day)");
        }
        if config.retry.max_attempts == 0 {
            problems.add("retry.max_attempts", "must be at least 1 (1 disables retries)");
        }
        if config.max_concurrent == 0 || config.max_concurrent > tokio::sync::Semaphore::MAX_PERMITS {
            problems.add("max_concurrent", format!("must be between 1 and {}", tokio::sync::Semaphore::MAX_PERMITS));
        }
        if config.max_response_bytes == 0 {
            problems.add("max_response_bytes", "must be at least 1");
        }
        let pool = problems.ok(pool::Pool::new(&config.base_urls, &config.ejection)).map(Arc::new);
        let client = problems.ok(client::build(config, credential));
        if let Some(health) = &config.health_check {
            problems.ok(pool::check_health_config(health));
        }
        let (Some(exchange), Some(pool), Some(client)) = (exchange, pool, client) else { return Err(problems) };
        let mut pools = vec![pool];
        let mut catalog = Catalog::default();
        let mut plans = HashMap::with_capacity(tools.len());
        for (mut plan, spec) in tools {
            if let Some(server) = plan.server() {
                // One pool per distinct server, shared by the plans that name it.
                match pools.iter().position(|p| p.count() == 1 && p.base(0) == Some(server.trim_end_matches('/'))) {
                    Some(i) => plan.pool = i,
                    _ => match pool::Pool::new(&[server.to_owned()], &config.ejection) {
                        Ok(p) => {
                            plan.pool = pools.len();
                            pools.push(Arc::new(p));
                        }
                        Err(p) => {
                            let key = format!("tools.{}.server", spec.tool.name);
                            problems.add(key, format!("its server {}", p.problem));
                            continue;
                        }
                    },
                }
            }
            plans.insert(spec.tool.name.clone(), plan);
            catalog.tools.push(spec);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        // The health check's path is the adapter's upstreams' own: a plan's server (another
        // host, e.g. an OpenAPI operation's) is left to passive ejection.
        if let Some(health) = config.health_check.as_ref().filter(|_| !env.is_offline()) {
            pool::spawn_health_checks(&pools[0], client.clone(), health)?;
        }
        let executor = Executor::new(client, pools, &config.retry, config.max_response_bytes);
        Ok(Self {
            catalog,
            plans,
            executor,
            max_response_bytes: config.max_response_bytes,
            slots: tokio::sync::Semaphore::new(config.max_concurrent),
            max_concurrent: config.max_concurrent,
            exchange,
        })
    }
}

impl Rest {
    /// Reports the pool's ejections, returns and retries to `observe` (see `BuildContext::observe`).
    #[must_use]
    pub fn observed(self, observe: &Observe) -> Self {
        for pool in self.executor.pools() {
            pool.observe(observe);
        }
        self
    }

    /// One request to the upstream (retries included), within the call's deadline.
    async fn send(
        &self,
        plan: &Plan,
        request: &request::Prepared,
        cx: &CallContext,
        budget: std::time::Duration,
    ) -> Result<execute::Reply, AdapterError> {
        tokio::select! {
            biased;
            () = cx.cancel.cancelled() => Err(AdapterError::Cancelled),
            r = tokio::time::timeout_at(cx.deadline, self.executor.run(plan, request, cx)) => {
                r.map_err(|_| AdapterError::Timeout(budget))?
            }
        }
    }
}

#[async_trait]
impl mcp_adapter_api::Adapter for Rest {
    fn catalog(&self) -> Catalog {
        self.catalog.clone()
    }

    fn status(&self) -> mcp_adapter_api::Status {
        let backends = self.executor.status();
        let running = self.max_concurrent.saturating_sub(self.slots.available_permits());
        mcp_adapter_api::Status {
            healthy: Some(backends.iter().any(|b| b.state == "in_rotation")),
            backends,
            concurrency: Some((running, self.max_concurrent)),
        }
    }

    async fn call_tool(&self, call: ToolCall<'_>, cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError> {
        let plan = self.plans.get(call.name).ok_or_else(|| AdapterError::UnknownTool(call.name.to_owned()))?;
        let mut request = plan.prepare(call.arguments)?;
        // `user_auth`: the caller's own token at the upstream, from the runtime's vault.
        let exchange = plan.exchange().or(self.exchange.as_ref()).filter(|_| cx.user_token.is_none());
        if let Some(token) = &cx.user_token {
            request.headers.insert(AUTHORIZATION, token.authorization().clone());
        } else if let Some(exchange) = exchange {
            // The caller's token is traded for the upstream's; a refusal is the tool's answer.
            match exchange.for_call(cx).await? {
                Ok(value) => {
                    request.headers.insert(AUTHORIZATION, value);
                }
                Err(e) => return Ok(Outcome::Complete(no_credential(call.name, &e))),
            }
        }
        let budget = cx.remaining();
        // The runtime also bounds the call; stopping here too keeps the adapter correct on its
        // own (benches, other hosts) and drops the in-flight request, closing its connection.
        // At most `max_concurrent` calls of this adapter in flight; a call waits for a slot
        // until its deadline.
        let _slot = tokio::select! {
            biased;
            () = cx.cancel.cancelled() => return Err(AdapterError::Cancelled),
            slot = tokio::time::timeout_at(cx.deadline, self.slots.acquire()) => match slot {
                Ok(Ok(slot)) => slot,
                Ok(Err(closed)) => return Err(AdapterError::Internal(format!("adapter slots: {closed}"))),
                Err(_) => {
                    return Ok(Outcome::Complete(CallToolResult::error(format!(
                        "The tool '{}' is busy: all {} calls this adapter allows at once (max_concurrent) were in \
                         use until this call's deadline. Try again later.",
                        call.name, self.max_concurrent
                    ))));
                }
            },
        };
        let mut reply = self.send(plan, &request, cx, budget).await?;
        // The caller's own token refused: the runtime asks the caller to connect again.
        if reply.status == reqwest::StatusCode::UNAUTHORIZED && cx.user_token.is_some() {
            return Err(AdapterError::UserTokenRefused);
        }
        // An exchanged token the upstream refuses (revoked or its keys rotated before it
        // expired) is dropped and the call sent once more with a fresh one: a 401 means the
        // request was not carried out (RFC 6750 § 3.1).
        if reply.status == reqwest::StatusCode::UNAUTHORIZED
            && let (Some(exchange), Some(refused)) = (exchange, request.headers.get(AUTHORIZATION).cloned())
        {
            exchange.forget(cx, &refused).await;
            match exchange.for_call(cx).await? {
                Ok(value) if value != refused => {
                    request.headers.insert(AUTHORIZATION, value);
                    reply = self.send(plan, &request, cx, budget).await?;
                }
                Ok(_) => {}
                Err(e) => return Ok(Outcome::Complete(no_credential(call.name, &e))),
            }
        }
        Ok(Outcome::Complete(response::to_result(&reply, self.max_response_bytes)))
    }
}

/// The tool's answer when no upstream token could be had.
fn no_credential(tool: &str, e: &token_exchange::ExchangeError) -> CallToolResult {
    CallToolResult::error(format!("The tool '{tool}' has no upstream credential for this call: {e}."))
}

#[cfg(test)]
mod tests;
