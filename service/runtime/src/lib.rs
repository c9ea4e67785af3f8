//! mcp-runtime: a stateless, horizontally scaled MCP 2026-07-28 server over Streamable HTTP.
//!
//! Any replica answers any request: identity and capabilities travel in every request's
//! `_meta`, MRTR state travels sealed in `requestState`, and registries are built once per
//! configuration load.
//!
//! - [`cli`]: `mcp-runtime serve | check`.
//! - [`config`]: the TOML file + environment, validated once.
//! - [`adapters`]: builds adapter instances from the closed set of kinds.
//! - [`registry`]: tools/resources/prompts indexed and pre-rendered per load.
//! - [`reload`]: configuration hot reload (SIGHUP, file changes), swapped atomically.
//! - [`http`]: the Streamable HTTP endpoint, its ordered checks, JSON and SSE replies.
//! - [`methods`]: one module per MCP method.
//! - [`mrtr`]: multi round-trip requests and sealed `requestState`.
//! - [`rpc`]: JSON-RPC errors (one mapping to the wire), envelope, response bodies.
//! - [`events`]: the change bus behind `subscriptions/listen`.
//! - [`cluster`]: optional Redis: shared caches, fan-out, rate limits, tasks.
//! - [`tasks`]: the tasks extension: background tool calls polled with `tasks/get`.
//! - [`state`]: what one replica shares between requests.
//! - [`telemetry`]: logs, OpenTelemetry traces and metrics, the Prometheus metrics facade.

pub mod adapters;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod config;
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
