//! Builds adapter instances from the closed set of kinds in the config (the one place that
//! knows every adapter crate), each through the contract's build side
//! ([`mcp_adapter_api::Build`]).

use std::sync::Arc;
use std::time::Duration;

use mcp_adapter_api::{Adapter, Build, BuildContext, Problems};
use mcp_adapter_cli::Cli;
use mcp_adapter_fixtures::Fixtures;
use mcp_adapter_mcp::Mcp;
use mcp_adapter_openapi::OpenApi;
use mcp_adapter_rest::Rest;
use mcp_adapter_skills::SkillTree;

use crate::config::{AdapterKind, Config};
use crate::events::Events;
use crate::registry::{NamedAdapter, Registry};
use crate::telemetry::metrics::Metrics;
use crate::telemetry::observe::observer;

/// One adapter per `[[adapters]]` entry, in file order, and the problems of every entry
/// that could not be built (keys `adapters.<name>.…`): one run reports them all. Adapters see
/// the environment the config was loaded with ([`Config::env`]), never the live process
/// environment, and report what they observe of their backends into `metrics`. Offline
/// ([`mcp_adapter_api::Environment::is_offline`]), what needs the world outside the file is
/// skipped (see [`Build::build`]) and an MCP upstream is only checked, never contacted.
pub async fn build(config: &Config, events: &Events, metrics: &Arc<Metrics>) -> (Vec<NamedAdapter>, Problems) {
    let mut out = Vec::with_capacity(config.adapters.len());
    let mut problems = Problems::new();
    for a in &config.adapters {
        let cx = BuildContext {
            name: a.name.clone(),
            env: config.env.clone(),
            changes: events.handle(),
            catalog_changed: events.catalog_handle(),
            observe: observer(metrics, &a.name),
            user_auth: a.user_auth.clone(),
        };
        let cx = &cx;
        let adapter = match &a.kind {
            AdapterKind::Fixtures(c) => instance::<Fixtures>(c, cx),
            // Client, pool and plans are built here, once per load.
            AdapterKind::Rest(c) => instance::<Rest>(c, cx),
            // Programs are resolved on PATH and allow-listed variables captured now.
            AdapterKind::Cli(c) => instance::<Cli>(c, cx),
            AdapterKind::Mcp(c) if cx.env.is_offline() => {
                problems.extend(Mcp::check(c, cx).under(&format!("adapters.{}", a.name)));
                continue;
            }
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
            // The folder is scanned now, then polled for changes while the adapter lives.
            AdapterKind::Skills(c) => instance::<SkillTree>(c, cx),
        };
        match adapter {
            Ok(adapter) => out.push(NamedAdapter {
                name: a.name.clone(),
                kind: a.kind.as_str(),
                adapter,
                user_auth: a.user_auth.as_deref().map(Arc::from),
            }),
            Err(p) => problems.extend(p.under(&format!("adapters.{}", a.name))),
        }
    }
    (out, problems)
}

/// A configuration's adapters and the registry over them, with the change bus and metrics
/// the adapters report to.
pub struct Catalog {
    /// Where the adapters announce changes.
    pub events: Events,
    /// Where they report what they observe of their backends.
    pub metrics: Arc<Metrics>,
    /// The adapters, in file order.
    pub adapters: Vec<NamedAdapter>,
    /// Their tools, resources and prompts, indexed and rendered.
    pub registry: Registry,
}

/// The adapters of `config` and the registry over them, reporting to `events` and `metrics`
/// (a reload's, or new ones: [`Catalog::load`]), or every problem of both: the registry's
/// checks run over the adapters that did build, so one run reports all. This is the one way
/// a configuration's catalog is made: `serve`, `check` and reloads go through it.
pub async fn load(
    config: &Config,
    events: &Events,
    metrics: &Arc<Metrics>,
) -> Result<(Vec<NamedAdapter>, Registry), Problems> {
    let (adapters, mut problems) = build(config, events, metrics).await;
    match Registry::build(config, &adapters) {
        Ok(registry) if problems.is_empty() => Ok((adapters, registry)),
        Ok(_) => Err(problems),
        Err(e) => {
            problems.extend(e.into());
            Err(problems)
        }
    }
}

impl Catalog {
    /// [`load`] with a new change bus and metrics (start-up, `check`).
    pub async fn load(config: &Config) -> Result<Self, Problems> {
        let events = Events::new();
        let metrics = Arc::new(Metrics::new(&[], crate::telemetry::Flags::otel_metrics(&config.telemetry)));
        let (adapters, registry) = load(config, &events, &metrics).await?;
        metrics.reload(&registry);
        Ok(Self { events, metrics, adapters, registry })
    }
}

fn instance<A: Build>(config: &A::Config, cx: &BuildContext) -> Result<Arc<dyn Adapter>, Problems> {
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
        let (built, problems) = build(&config, &Events::new(), &metrics()).await;
        assert_eq!((built.len(), problems.len()), (1, 0));

        let config = Config::from_toml(REST).unwrap();
        let e = build(&config, &Events::new(), &metrics()).await.1.to_string();
        assert_eq!(e, "adapters.api.auth.secret_env: environment variable API_TOKEN is not set");
    }

    #[tokio::test]
    async fn the_faults_set_follows_the_feature() {
        let config = Config::from_toml("[[adapters]]\nkind = \"fixtures\"\nset = \"faults\"\n").unwrap();
        let (_, problems) = build(&config, &Events::new(), &metrics()).await;
        if cfg!(feature = "test-fixtures") {
            assert!(problems.is_empty());
        } else {
            let e = problems.to_string();
            assert!(e.starts_with("adapters.fixtures.set: ") && e.contains("does not include"), "{e}");
        }
    }
}
