//! Builds adapter instances from the closed set of kinds in the config (the one place that
//! knows every adapter crate), each through the contract's build side
//! ([`mcp_adapter_api::Build`]).

use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::{Adapter, Build, BuildContext};
use mcp_adapter_cli::Cli;
use mcp_adapter_fixtures::Fixtures;
use mcp_adapter_mcp::Mcp;
use mcp_adapter_openapi::OpenApi;
use mcp_adapter_rest::Rest;

use crate::config::{AdapterKind, Config, ConfigError};
use crate::events::Events;
use crate::registry::NamedAdapter;
use crate::telemetry::metrics::Metrics;
use crate::telemetry::observe::observer;

/// One adapter per `[[adapters]]` entry, in file order. Adapters see the environment the
/// config was loaded with ([`Config::env`]), never the live process environment, and report
/// what they observe of their backends into `metrics`.
pub async fn build(config: &Config, events: &Events, metrics: &Arc<Metrics>) -> Result<Vec<NamedAdapter>, ConfigError> {
    let mut out = Vec::with_capacity(config.adapters.len());
    for a in &config.adapters {
        let cx = BuildContext {
            env: config.env.clone(),
            changes: events.handle(),
            catalog_changed: events.catalog_handle(),
            observe: observer(metrics, &a.name),
        };
        let cx = &cx;
        let adapter = match &a.kind {
            AdapterKind::Fixtures(c) => instance::<Fixtures>(c, cx),
            // Client, pool and plans are built here, once per load.
            AdapterKind::Rest(c) => instance::<Rest>(c, cx),
            // Programs are resolved on PATH and allow-listed variables captured now.
            AdapterKind::Cli(c) => instance::<Cli>(c, cx),
            // The upstream's lists are fetched before the first registry is built (bounded:
            // an upstream that is down starts empty and fills in when it answers).
            AdapterKind::Mcp(c) => match Mcp::build(c, cx) {
                Ok(mcp) => {
                    mcp.first_catalog(Duration::from_millis(c.request_timeout_ms.saturating_mul(2))).await;
                    Ok(Arc::new(mcp) as Arc<dyn Adapter>)
                }
                Err(p) => Err(p),
            },
            // The document is read (or fetched) now, on every load: a reload picks up a new one.
            AdapterKind::OpenApi(c) => OpenApi::load(c, cx).await.map(|a| Arc::new(a) as Arc<dyn Adapter>),
        }
        .map_err(|p| ConfigError::from(p.under(&format!("adapters.{}", a.name))))?;
        out.push(NamedAdapter { name: a.name.clone(), kind: a.kind.as_str(), adapter });
    }
    Ok(out)
}

fn instance<A: Build>(
    config: &A::Config,
    cx: &BuildContext,
) -> Result<Arc<dyn Adapter>, mcp_adapter_api::ConfigProblem> {
    Ok(Arc::new(A::build(config, cx)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics() -> Arc<Metrics> {
        Arc::new(Metrics::new(&[], false))
    }

    const REST: &str = r#"
[[adapters]]
name = "api"
kind = "rest"
base_urls = ["http://127.0.0.1:9"]
auth = { kind = "bearer", secret_env = "API_TOKEN" }

[[adapters.tools]]
name = "ping"
description = "Pings."
path = "/ping"
"#;

    #[tokio::test]
    async fn adapters_see_the_environment_the_config_was_loaded_with() {
        let env = [("API_TOKEN", "t0ken")].into_iter().collect();
        let config = Config::from_toml_with_env(REST, env).unwrap();
        assert_eq!(build(&config, &Events::new(), &metrics()).await.unwrap().len(), 1);

        let config = Config::from_toml(REST).unwrap();
        let e = build(&config, &Events::new(), &metrics()).await.err().unwrap().to_string();
        assert_eq!(e, "adapters.api.auth.secret_env: environment variable API_TOKEN is not set");
    }

    #[tokio::test]
    async fn the_faults_set_follows_the_feature() {
        let config = Config::from_toml("[[adapters]]\nkind = \"fixtures\"\nset = \"faults\"\n").unwrap();
        let built = build(&config, &Events::new(), &metrics()).await;
        if cfg!(feature = "test-fixtures") {
            assert!(built.is_ok());
        } else {
            let e = built.err().unwrap().to_string();
            assert!(e.starts_with("adapters.fixtures.set: ") && e.contains("does not include"), "{e}");
        }
    }
}
