//! mcp-runtime: a stateless, horizontally scaled MCP 2026-07-28 server over Streamable HTTP.
//!
//! Any replica answers any request: identity and capabilities travel in every request's
//! `_meta`, MRTR state travels sealed in `requestState`, and registries are built once per
//! configuration load.
//!
//! The modules form layers; each imports only modules of the layers above it in this list
//! (`tests/layers.py` checks it; docs/architecture.md § Layers says why and how to add a
//! method):
//!
//! 1. [`clock`]: Unix milliseconds. [`events`]: the change bus behind `subscriptions/listen`.
//!    [`config`]: the TOML file + environment, validated once. [`rpc`]: the protocol level:
//!    methods, the checked request, errors (one mapping to the wire), envelope, header
//!    decoding, response bodies and the transport-neutral [`rpc::Reply`].
//! 2. [`registry`]: tools/resources/prompts indexed and pre-rendered per load.
//! 3. [`telemetry`]: logs, OpenTelemetry traces and metrics, per-request telemetry.
//! 4. [`cluster`]: optional Redis: shared caches, fan-out, rate limits, the task store.
//!    [`mrtr`]: multi round-trip requests and sealed `requestState`. [`adapters`]: builds
//!    adapter instances from the closed set of kinds. [`auth`]: who is calling (static
//!    tokens, JWT issuers and their keys) and the access rules per tool, prompt and resource.
//! 5. [`connect`]: each caller's own upstream accounts (`[user_auth]`): the link, the sign-in
//!    and consent flow, the vault of sealed grants, refreshes.
//! 6. [`state`]: what one replica shares between requests, the readiness checks, the task book.
//! 7. [`pipeline`]: the one call pipeline (input round, cache, deadline, cancellation,
//!    finish, streaming) of `tools/call`, `resources/read`, `prompts/get` and task rounds.
//! 8. [`tasks`]: the tasks extension: background tool calls polled with `tasks/get`.
//! 9. [`methods`]: one module per MCP method, answering an [`rpc::Reply`]. [`console`]: the
//!    operator console's data (pages' JSON, counter sampling, replica heartbeats).
//! 10. [`http`]: the Streamable HTTP endpoint, its ordered checks, JSON and SSE responses;
//!     the only module that knows axum and hyper. [`reload`]: configuration hot reload
//!     (SIGHUP, file changes), swapped atomically.
//! 11. [`cli`]: `mcp-runtime serve | check`.

pub mod adapters;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod connect;
pub mod console;
pub mod events;
pub mod http;
pub mod methods;
pub mod mrtr;
pub mod pipeline;
pub mod registry;
pub mod reload;
pub mod rpc;
pub mod state;
pub mod tasks;
pub mod telemetry;

pub use config::Config;
pub use http::{app, serve};
pub use state::AppState;
