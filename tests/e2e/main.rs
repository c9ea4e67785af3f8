//! The black-box tests, one binary: each module starts the real `mcp-runtime` binary (built
//! once per test process, see `mcp_e2e::paths::runtime_bin`) from a config and talks to it
//! over HTTP only, with real child processes, HTTP upstreams, Redis and nginx; no mocks.
//!
//! `cargo test -p mcp-e2e --test e2e -- MODULE::` runs one module. The scenarios behind nginx
//! (`cluster::behind_nginx::`) share the machine with k6 and the conformance suite: tests/run.sh
//! skips them in the workspace run and runs them on their own, one at a time.

mod adapter_metrics;
mod audit;
mod auth;
mod cli_adapter;
mod cli_paths;
mod cluster;
mod config_sets;
mod console;
mod endpoints;
mod examples;
mod first_hour;
mod first_touch;
mod hardening;
mod hostile;
mod http_clients;
mod keepalive_nginx;
mod legacy_clients;
mod legacy_cluster;
mod limits;
mod mcp_adapter;
mod mrtr;
mod oauth;
mod openapi_adapter;
mod pinning;
mod redis_cluster;
mod redis_topologies;
mod rest_adapter;
mod scale;
mod server_card;
mod shutdown;
mod skills_adapter;
mod tasks;
mod telemetry;
mod tls;
mod token_exchange;
mod tool_search;
mod transport;
mod user_auth;
