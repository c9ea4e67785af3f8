//! Builds adapter instances from the closed set of kinds in the config (the one place that
//! knows every adapter crate).

use std::sync::Arc;

use mcp_adapter_api::Adapter;
use mcp_adapter_cli::Cli;
use mcp_adapter_fixtures::Fixtures;
use mcp_adapter_rest::Rest;

use crate::config::{AdapterKind, Config, ConfigError};
use crate::events::Events;
use crate::registry::NamedAdapter;

/// One adapter per `[[adapters]]` entry, in file order.
pub async fn build(config: &Config, events: &Events) -> Result<Vec<NamedAdapter>, ConfigError> {
    let mut out = Vec::with_capacity(config.adapters.len());
    for a in &config.adapters {
        let adapter: Arc<dyn Adapter> = match &a.kind {
            AdapterKind::Fixtures(c) => Arc::new(Fixtures::new(c, events.handle())),
            // Client, pool and plans are built here, once per load; secrets come from the
            // runtime's environment.
            AdapterKind::Rest(c) => Arc::new(
                Rest::new(c, &|var| std::env::var(var).ok())
                    .map_err(|p| ConfigError::invalid(format!("adapters.{}.{}", a.name, p.key), p.problem))?,
            ),
            // Programs are resolved on the runtime's PATH and allow-listed variables captured now.
            AdapterKind::Cli(c) => Arc::new(
                Cli::new(c, &|var| std::env::var_os(var))
                    .map_err(|e| ConfigError::invalid(format!("adapters.{}.{}", a.name, e.key), e.problem))?,
            ),
        };
        out.push((a.name.clone(), adapter));
    }
    Ok(out)
}
