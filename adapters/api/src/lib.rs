//! The adapter contract: how a backend (a CLI, a REST API, fixtures, ...) plugs into the runtime.
//!
//! An adapter publishes a [`Catalog`] of tools, resources and prompts, and answers calls.
//! Every call gets a [`CallContext`] (deadline, cancellation, caller identity, client
//! capabilities, progress/log sink) and returns an [`Outcome`]: a final result, or a request for
//! input from the user (MRTR, MCP 2026-07-28 basic/patterns/mrtr) with state the runtime seals and hands back on the retry.
//! Errors are an [`AdapterError`] that says who failed; the runtime maps them to the wire.
//!
//! - [`build`]: how an adapter kind is built from its config section ([`Build`], [`BuildContext`]).
//! - [`catalog`]: what an adapter offers (skills included), plus runtime policies per tool.
//! - [`declare`]: the tool declaration config-driven adapters share ([`ToolDecl`]).
//! - [`call`]: the calls and their outcomes.
//! - [`context`]: the per-call context and its notification sink.
//! - [`error`]: the adapter error type.
//! - [`changes`]: how an adapter announces that its lists or resources changed.
//! - [`observe`]: what an adapter reports about its backends (ejections, retries, exits).
//! - [`status`]: an adapter's backends as the operator console shows them.
//! - [`problems`]: configuration problems, every one of a load ([`Problems`]).
//! - [`schema_check`]: a tool's JSON Schemas checked at load, every problem at its key.
//! - [`secret`]: secrets from the environment or files, never printed.
//! - [`template`]: the one `{placeholder}` grammar of adapter configs.
//! - [`uri_template`]: RFC 6570 level-1 matching for resource templates.

pub mod build;
pub mod call;
pub mod catalog;
pub mod changes;
pub mod context;
pub mod declare;
pub mod error;
pub mod observe;
pub mod problems;
pub mod schema_check;
pub mod secret;
pub mod status;
pub mod template;
pub mod uri_template;

pub use async_trait::async_trait;
pub use build::{Build, BuildContext, Environment};
pub use call::{Completion, Input, InputRequired, Outcome, PromptGet, ResourceRead, ToolCall};
pub use catalog::{ArgumentCheck, Catalog, Directory, PolicyOverride, Skills, TaskSupport, ToolPolicy, ToolSpec};
pub use changes::{CatalogChanged, Change, Changes};
pub use context::{CallContext, Caller, Identity, Notice, Notifier, UserToken};
pub use declare::{ToolDecl, ToolKind};
pub use error::AdapterError;
pub use mcp_protocol as protocol;
pub use observe::{Exit, ExitEvents, Observe, Observer, UpstreamEvents};
pub use problems::{ConfigProblem, Problems, closest};
pub use schema_check::{SchemaRole, schema_problems};
pub use secret::{Secret, SecretSource};
pub use status::{Backend, Status};
pub use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use mcp_protocol::{CallToolResult, GetPromptResult, ReadResourceResult};

/// A backend plugged into the runtime. Built once per configuration load; shared by every
/// request through `Arc<dyn Adapter>`, so it must be cheap to call concurrently.
#[async_trait]
pub trait Adapter: Send + Sync + 'static {
    /// What this adapter offers right now. Called when the registry is built (at start-up, on
    /// reload, and after the adapter signalled [`CatalogChanged`]), never per request.
    fn catalog(&self) -> Catalog;

    /// What `mcp-runtime check` prints about this adapter beyond its catalog (an import's
    /// figures: operations found, tools made, what was left out and why). Default: nothing.
    fn report(&self) -> Option<String> {
        None
    }

    /// A snapshot of this adapter's backends for the operator console; taken when an
    /// operator looks, never per call. Default: nothing to report.
    fn status(&self) -> Status {
        Status::default()
    }

    /// Whether this adapter has tools per caller ([`Self::caller_tools`]) beside its catalog.
    /// Read when the registry is built. Default: no.
    fn lists_per_caller(&self) -> bool {
        false
    }

    /// The tools only this caller sees, beside [`Self::catalog`]: for an upstream that lists
    /// its tools to each signed-in user and to no service (an `mcp` adapter with `user_auth`
    /// and no `auth`), fetched with the caller's own credential (`cx.user_token`) and kept per
    /// caller. Called for `tools/list` and for a call of a name the catalog lacks, only when
    /// [`Self::lists_per_caller`]. Default: none.
    async fn caller_tools(&self, _cx: &CallContext) -> Result<Arc<[ToolSpec]>, AdapterError> {
        Ok(Arc::from([]))
    }

    /// Runs a tool. A tool that fails in a way the model can fix answers `Ok` with
    /// `isError: true`; an `Err` is a protocol error or a backend failure.
    async fn call_tool(&self, call: ToolCall<'_>, cx: &CallContext) -> Result<Outcome<CallToolResult>, AdapterError>;

    /// Reads a resource this adapter listed, or one matching one of its templates.
    async fn read_resource(
        &self,
        read: ResourceRead<'_>,
        _cx: &CallContext,
    ) -> Result<Outcome<ReadResourceResult>, AdapterError> {
        Err(AdapterError::ResourceNotFound(read.uri.to_owned()))
    }

    /// Renders a prompt this adapter listed.
    async fn get_prompt(
        &self,
        get: PromptGet<'_>,
        _cx: &CallContext,
    ) -> Result<Outcome<GetPromptResult>, AdapterError> {
        Err(AdapterError::UnknownPrompt(get.name.to_owned()))
    }

    /// Suggests values for a prompt argument or template variable. Default: none.
    async fn complete(
        &self,
        _request: Completion<'_>,
        _cx: &CallContext,
    ) -> Result<mcp_protocol::Completion, AdapterError> {
        Ok(mcp_protocol::Completion::default())
    }
}
