//! Builds adapter instances from the closed set of kinds in the config (the one place that
//! knows every adapter crate), each through the contract's build side
//! ([`mcp_adapter_api::Build`]).

use std::sync::Arc;

use mcp_adapter_api::{Adapter, Build, BuildContext};
use mcp_adapter_cli::Cli;
use mcp_adapter_fixtures::Fixtures;
use mcp_adapter_rest::Rest;

use crate::config::{AdapterKind, Config, ConfigError};
use crate::events::Events;
use crate::registry::NamedAdapter;

/// One adapter per `[[adapters]]` entry, in file order. Adapters see the environment the
/// config was loaded with ([`Config::env`]), never the live process environment.
pub async fn build(config: &Config, events: &Events) -> Result<Vec<NamedAdapter>, ConfigError> {
    let cx = BuildContext { env: config.env.clone(), changes: events.handle() };
    let mut out = Vec::with_capacity(config.adapters.len());
    for a in &config.adapters {
        let adapter = match &a.kind {
            AdapterKind::Fixtures(c) => instance::<Fixtures>(c, &cx),
            // Client, pool and plans are built here, once per load.
            AdapterKind::Rest(c) => instance::<Rest>(c, &cx),
            // Programs are resolved on PATH and allow-listed variables captured now.
            AdapterKind::Cli(c) => instance::<Cli>(c, &cx),
        }
        .map_err(|p| ConfigError::from(p.under(&format!("adapters.{}", a.name))))?;
        out.push((a.name.clone(), adapter));
    }
    Ok(out)
}

fn instance<A: Build>(
    config: &A::Config,
    cx: &BuildContext,
) -> Result<Arc<dyn Adapter>, mcp_adapter_api::ConfigProblem> {
    Ok(Arc::new(A::build(config, cx)?))
}
