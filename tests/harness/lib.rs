//! Harness for the black-box tests: start the real `mcp-runtime` binary from a config string
//! on a free loopback port, talk MCP over HTTP, read SSE, and check bodies against the
//! official JSON Schema of the revision (installed by `tests/interop/setup.sh`).
//!
//! - [`server`]: starting and stopping runtime processes.
//! - [`containers`]: the container engine (testcontainers), and containers removed on drop.
//! - [`images`]: the images of the parts, built from local Debian packages' files.
//! - [`adapter_conformance`]: the shared test every adapter kind passes.
//! - [`client`]: building MCP requests and reading JSON / SSE answers.
//! - [`curl`]: curl as a real HTTP/2 and HTTP/1.1 client.
//! - [`issuer`]: a real OAuth authorization server (oidc-provider) on loopback.
//! - [`nginx`]: a real nginx (container) with the shipped round-robin config in front of replicas.
//! - [`schema`]: validation against the official `schema-2026-07-28.json`.
//! - [`procs`]: tool scripts and the processes they leave, read from `/proc`.
//! - [`prism`]: a Prism mock server generated from an OpenAPI document.
//! - [`paths`]: where the binary, the repository, the interop install and k6 are.
//! - [`prometheus`]: a real Prometheus (container), for the observability check.
//! - [`redis`]: a real Redis (container), and the pods Redis topologies run in.
//! - [`redis_topology`]: Redis over TLS with ACL users, Sentinel, and Cluster, all real.
//! - [`wait`]: polling with a deadline (`eventually`, `until`).

pub mod adapter_conformance;
pub mod browser;
pub mod client;
pub mod containers;
pub mod curl;
pub mod images;
pub mod issuer;
pub mod nginx;
pub mod paths;
pub mod prism;
pub mod procs;
pub mod prometheus;
pub mod redis;
pub mod redis_topology;
pub mod schema;
pub mod server;
pub mod wait;

pub use client::{Answer, Mcp, envelope};
pub use server::{Server, run};

/// Installs ring as the process-wide TLS provider. The workspace builds reqwest with
/// `rustls-no-provider` (for the REST adapter), and feature unification hands that to the
/// tests' clients too: without a provider their first `Client` would panic. Called by
/// [`Server::start`] and [`Mcp::new`], so every test has it before it builds a client.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A config serving every fixture set (conformance, demo, faults) with small pages.
pub const FIXTURES_CONFIG: &str = r#"
[server]
name = "mcp-e2e"
page_size = 100
call_timeout_ms = 5000

[[adapters]]
name = "conformance"
kind = "fixtures"
set = "conformance"

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"

[[adapters]]
name = "faults"
kind = "fixtures"
set = "faults"
"#;
